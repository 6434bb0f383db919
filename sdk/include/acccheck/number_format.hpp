// Numbers printed and parsed exactly as the reference (Python / numpy) does, so CSV cells and JSON
// files match byte for byte, and parsing is correctly rounded (never 1 ulp off at a threshold).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace acccheck {

// Python repr(float): shortest round-trip digits; scientific when exp < -4 or exp >= 16
// ("1e-05", "0.1", "1.0", "1e+16"); "NaN"/"Infinity"/"-Infinity" as json.dumps writes them.
std::string python_float_repr(double v);
// numpy repr of a float32 scalar: shortest float32 digits, same layout rule ("0.3797404", "1e-05").
// Non-finite: "nan", "inf", "-inf".
std::string numpy_float32_repr(float v);
// A float32 value in JSON with the fewest digits that read back (rounded to float32) as the same
// value: "1.9947922" where python_float_repr of the same value writes "1.9947922229766846".
// Non-finite as json.dumps writes them: "NaN", "Infinity", "-Infinity".
std::string json_float32_repr(float v);
// Python "{:.14f}".format(v) (any precision): "1.60000000000000", "nan", "inf", "-inf".
std::string python_fixed(double v, int decimals = 14);

// Python float(text): surrounding whitespace allowed; "nan", "inf", "-inf", "infinity" in any case;
// correctly rounded. nullopt when not a number.
std::optional<double> parse_python_float(std::string_view text);

// True when every character is whitespace and there is at least one (Python str.isspace()).
bool is_python_space(std::string_view text);

}  // namespace acccheck
