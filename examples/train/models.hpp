// The example models of acccheck-example-train: small on purpose (a training step of each dumps
// 40-150 operator calls and replays in seconds) yet covering the operator families that lose
// precision on accelerators — matrix products, convolution, normalisation, softmax, activations,
// losses and the optimiser's in-place updates.
#pragma once

#include <torch/nn.h>

#include <cmath>
#include <memory>

namespace example {

// Linear → relu → linear → tanh → linear; mse loss against random targets.
struct Mlp : torch::nn::Module {
  Mlp(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        fc3(register_module("fc3", torch::nn::Linear(hidden, out))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::tanh(fc2->forward(x));
    return fc3->forward(x);
  }
  torch::nn::Linear fc1, fc2, fc3;
};

// Two conv → batch norm → relu → max pool blocks, then a linear classifier (cross entropy).
struct Cnn : torch::nn::Module {
  Cnn()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1)))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(8))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).padding(1)))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(16))),
        fc(register_module("fc", torch::nn::Linear(16 * 4 * 4, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(bn1->forward(conv1->forward(x))), 2);
    x = torch::max_pool2d(torch::relu(bn2->forward(conv2->forward(x))), 2);
    return fc->forward(x.flatten(1));
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Linear fc;
};

// One pre-norm transformer block over token embeddings: causal self-attention written out
// (matmul, scaling, masked_fill, softmax, matmul) and a gelu MLP, then a language-model head.
struct TinyTransformer : torch::nn::Module {
  TinyTransformer(int64_t vocab, int64_t seq, int64_t dim, int64_t heads)
      : heads(heads),
        embed(register_module("embed", torch::nn::Embedding(vocab, dim))),
        ln1(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        qkv(register_module("qkv", torch::nn::Linear(dim, 3 * dim))),
        proj(register_module("proj", torch::nn::Linear(dim, dim))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        up(register_module("up", torch::nn::Linear(dim, 4 * dim))),
        down(register_module("down", torch::nn::Linear(4 * dim, dim))),
        head(register_module("head", torch::nn::Linear(dim, vocab))) {
    position = register_parameter("position", torch::randn({seq, dim}) * 0.02);
    // Not a registered buffer: Module::to(dtype) would turn the boolean mask into bfloat16.
    causal = torch::ones({seq, seq}, torch::kBool).triu(1);
  }
  torch::Tensor forward(torch::Tensor tokens) {
    const int64_t b = tokens.size(0), t = tokens.size(1), d = position.size(1), hd = d / heads;
    torch::Tensor x = embed->forward(tokens) + position;
    auto parts = qkv->forward(ln1->forward(x)).chunk(3, -1);
    auto split = [&](const torch::Tensor& p) { return p.view({b, t, heads, hd}).transpose(1, 2); };
    torch::Tensor q = split(parts[0]), k = split(parts[1]), v = split(parts[2]);
    torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
    // -8192, not -inf (statistics-mode replay draws inputs between Min and Max) nor -1e4 (not a
    // bfloat16 number: the float32 benchmark would hold a different fill value).
    scores = scores.masked_fill(causal, -8192.0);
    torch::Tensor attn = torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).reshape({b, t, d});
    x = x + proj->forward(attn);
    x = x + down->forward(torch::gelu(up->forward(ln2->forward(x))));
    return head->forward(x);
  }
  int64_t heads;
  torch::nn::Embedding embed;
  torch::nn::LayerNorm ln1;
  torch::nn::Linear qkv, proj;
  torch::nn::LayerNorm ln2;
  torch::nn::Linear up, down, head;
  torch::Tensor position, causal;
};

}  // namespace example
