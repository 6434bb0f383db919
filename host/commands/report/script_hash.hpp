// The report's Content-Security-Policy allows exactly its own three inline scripts, by hash
// ('sha256-<base64>', CSP Level 2), instead of 'unsafe-inline': an HTML fragment that some data
// path ever turned into markup could then not run script (an onerror= attribute, an injected
// <script>). SHA-256 (FIPS 180-4) is written here: the host links no crypto library.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace acccheck::host {

std::array<std::uint8_t, 32> sha256(std::string_view bytes);
std::string base64(const std::uint8_t* bytes, std::size_t size);
// "'sha256-<base64 of the digest>'": a CSP source expression for an inline script with this text.
std::string csp_script_hash(std::string_view script_text);

}  // namespace acccheck::host
