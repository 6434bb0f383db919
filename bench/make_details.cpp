// Writes a synthetic pair of run_ut details CSVs (NPU and GPU) for N APIs, mixing the standards
// the way a real model does (mostly benchmark, some absolute/ULP/binary/thousandth rows, half of
// the APIs with a backward row), for timing `acccheck compare`.
//   make_details N OUT_DIR   → OUT_DIR/npu_details.csv, OUT_DIR/gpu_details.csv
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace {

const char* kHeader =
    "\xEF\xBB\xBF" "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,双百指标,双千指标,双万指标,"
    "二进制一致错误率,误差均衡性,均方根误差,小值域错误占比,相对误差最大值,相对误差平均值,inf/nan错误率,相对误差错误率,"
    "绝对误差错误率,ULP误差最大值,ULP误差平均值,ULP误差大于阈值占比,Status,Message\r\n";

struct Api {
  const char* family;
  const char* name;
  int kind;  // 0 benchmark, 1 absolute, 2 ulp, 3 binary, 4 thousandth
};
const Api kApis[] = {{"Functional", "softmax", 0}, {"Functional", "gelu", 0}, {"Functional", "layer_norm", 0},
                     {"Tensor", "mul", 1},        {"Tensor", "add", 1},       {"Torch", "matmul", 2},
                     {"Functional", "linear", 2}, {"Tensor", "reshape", 3},   {"Functional", "conv2d", 4},
                     {"Torch", "sum", 0}};

void row(std::FILE* f, const std::string& name, int kind, std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(0.5, 1.5);
  auto v = [&](double base) { return base * u(rng) * scale; };
  const char* head = ",torch.float32,torch.float16,\"(64, 128)\",0.99999705088202,0.006684661,1.00000000000000,0.23437500000000, ";
  switch (kind) {
    case 0:
      std::fprintf(f, "%s%s, ,%.14f,%.14f,%.14f,%.10g,%.10g, , , , , , ,pass,\"\nRelative error is greater than 0.001.\n\"\r\n",
                   name.c_str(), head, v(0.06), v(0.0025), v(0.75) > 1 ? 1.0 : 0.75, v(0.0039), v(0.0019));
      break;
    case 1:
      std::fprintf(f, "%s%s, , , , , , ,0,%.14f,0.00000000000000, , , ,pass,\r\n", name.c_str(), head, v(0.001) < 0.0011 ? 0.0 : v(0.001));
      break;
    case 2:
      std::fprintf(f, "%s%s, , , , , , , , , ,%.7g,%.7g,%.14f,pass,\r\n", name.c_str(), head, v(6.8), v(3.0), v(0.01));
      break;
    case 3:
      std::fprintf(f, "%s%s,0.00000000000000, , , , , , , , , , , ,pass,\r\n", name.c_str(), head);
      break;
    default:
      std::fprintf(f, "%s,torch.float32,torch.float16,\"(64, 128)\",0.99999,0.0001, ,%.14f, , , , , , , , , , , , , ,pass,\r\n",
                   name.c_str(), v(0.9995) > 1 ? 1.0 : 0.9995);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_details N OUT_DIR\n");
    return 2;
  }
  long n = std::atol(argv[1]);
  std::string dir = argv[2];
  for (int side = 0; side < 2; ++side) {
    std::string path = dir + (side == 0 ? "/npu_details.csv" : "/gpu_details.csv");
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
      std::perror(path.c_str());
      return 1;
    }
    std::fputs(kHeader, f);
    std::mt19937 rng(side == 0 ? 1 : 2);
    for (long i = 0; i < n; ++i) {
      const Api& api = kApis[i % 10];
      std::string base = std::string(api.family) + "." + api.name + "." + std::to_string(i / 10);
      double scale = side == 0 ? 1.3 : 1.0;  // the NPU is a little worse
      row(f, base + ".forward.output.0", api.kind, rng, scale);
      if (i % 2 == 0) row(f, base + ".backward.output.0", api.kind, rng, scale);
    }
    std::fclose(f);
  }
  return 0;
}
