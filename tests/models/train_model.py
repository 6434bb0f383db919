"""The real-model corpus: one training step of a library model nobody here wrote, for
`acccheck dump -- python train_model.py MODEL` (tests/models/, docs/detection.md).

  python train_model.py MODEL [--dtype fp32|bf16] [--steps N] [--time] [--print-steps]

MODEL: resnet18, mobilenet_v3_small, efficientnet_b0, vit, swin_t, shufflenet_v2, maxvit,
lraspp (torchvision, weights=None, small inputs; lraspp segments 4 classes per pixel), gpt (an
nn.TransformerEncoder language model), gpt_adam (the same trained with Adam and gradient clipping
in their multi-tensor `foreach` form, the default on CUDA and NPU), seq2seq (an encoder-decoder
nn.Transformer), lstm, gru (nn.LSTM / nn.GRU sequence classifiers). The
torchvision models need torchvision (Debian's python3-torchvision for the python3-torch configuration,
PyPI's torchvision 0.28.0 for the 2.13 wheel's); the others need only torch. Each step draws its batch with
torch.randn / torch.randint, trains with SGD and prints its loss. --time prints the median step time (steps after
the first two), --print-steps each step's time, for bench/corpus_dump_bench.sh."""
import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn

TORCHVISION = {"resnet18", "mobilenet_v3_small", "efficientnet_b0", "vit", "swin_t", "shufflenet_v2", "maxvit", "lraspp"}


def import_torchvision_without_its_operators_if_they_cannot_load():
    """The models are Python; torchvision's C++ operators (_C.so: nms, roi_align, ...) serve none of
    them. PyPI's torchvision is built against its release's CUDA torch, so beside the CPU torch 2.13
    wheel (scripts/setup.sh installs torchvision 0.28.0 without dependencies) its _C.so cannot load,
    and torchvision then fails registering meta kernels for the operators it lacks: those
    registrations are left out when the library does not load."""
    import glob
    import importlib.util
    import os
    import types

    spec = importlib.util.find_spec("torchvision")
    libraries = glob.glob(os.path.join(os.path.dirname(spec.origin), "_C*.so")) if spec else []
    try:
        if libraries:
            torch.ops.load_library(libraries[0])
    except OSError:
        sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
    import torchvision  # noqa: F401


def vision(name):
    import_torchvision_without_its_operators_if_they_cannot_load()
    import torchvision.models as tvm

    if name == "resnet18":
        return tvm.resnet18(weights=None, num_classes=10), (3, 32, 32)
    if name == "mobilenet_v3_small":
        return tvm.mobilenet_v3_small(weights=None, num_classes=10), (3, 32, 32)
    if name == "efficientnet_b0":
        return tvm.efficientnet_b0(weights=None, num_classes=10), (3, 32, 32)
    if name == "vit":
        from torchvision.models.vision_transformer import VisionTransformer

        return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                 mlp_dim=64, num_classes=10), (3, 32, 32)
    if name == "swin_t":
        from torchvision.models.swin_transformer import SwinTransformer

        return SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4],
                               window_size=[4, 4], stochastic_depth_prob=0.1, num_classes=10), (3, 32, 32)
    if name == "shufflenet_v2":  # 1x1 convolutions on 1x1 maps: sums that nearly cancel
        return tvm.shufflenet_v2_x0_5(weights=None, num_classes=10), (3, 32, 32)
    if name == "maxvit":  # reshape's views of strided windows; squeeze-excitation; relative position bias
        from torchvision.models.maxvit import MaxVit

        return MaxVit(input_size=(32, 32), stem_channels=16, partition_size=2, block_channels=[16, 32],
                      block_layers=[1, 1], head_dim=8, stochastic_depth_prob=0.1, num_classes=10), (3, 32, 32)
    if name == "lraspp":  # segmentation: bilinear upsampling, a per-pixel loss (aten::nll_loss2d_forward)
        from torchvision.models.segmentation import lraspp_mobilenet_v3_large

        return lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4), (3, 64, 64)
    raise ValueError(name)


class GPT(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=2, layers=2, seq=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, seq, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, dropout=0.1, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

    def forward(self, x):
        h = self.tok(x) + self.pos[:, : x.shape[1]]
        return self.head(self.body(h, mask=self.mask))


class Seq2Seq(nn.Module):
    """An encoder-decoder nn.Transformer over token pairs: x[:, 0] is the source, x[:, 1] the target."""

    def __init__(self, vocab=64, dim=32, heads=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.body = nn.Transformer(dim, heads, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=64,
                                   dropout=0.1, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x):
        # float32, as nn.Transformer's helper makes it, whatever the model's dtype: in bfloat16 the
        # attention adds it to bfloat16 scores (aten::baddbmm on LibTorch 1.13)
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[2])
        return self.head(self.body(self.tok(x[:, 0]), self.tok(x[:, 1]), tgt_mask=mask))


class SegmentationLogits(nn.Module):
    """torchvision's segmentation models return a dict; the loss takes its "out"."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


class Recurrent(nn.Module):
    def __init__(self, kind, dim=16, hidden=32, classes=4):
        super().__init__()
        self.rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(dim, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--time", action="store_true", help="print the median step time")
    p.add_argument("--print-steps", action="store_true", help="print each step's time")
    a = p.parse_args()
    torch.manual_seed(0)
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    batch = 2
    if a.model == "lraspp":
        model, shape = vision(a.model)
        make = lambda: (torch.randn(batch, *shape, dtype=dtype), torch.randint(0, 4, (batch, *shape[1:])))
        model = SegmentationLogits(model)
        loss_fn = nn.functional.cross_entropy
    elif a.model in TORCHVISION:
        model, shape = vision(a.model)
        make = lambda: (torch.randn(batch, *shape, dtype=dtype), torch.randint(0, 10, (batch,)))
        loss_fn = nn.functional.cross_entropy
    elif a.model in ("gpt", "gpt_adam"):
        model = GPT()
        make = lambda: (torch.randint(0, 64, (batch, 16)), torch.randint(0, 64, (batch, 16)))
        loss_fn = lambda out, y: nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))
    elif a.model == "seq2seq":
        model = Seq2Seq()
        make = lambda: (torch.randint(0, 64, (batch, 2, 8)), torch.randint(0, 64, (batch, 8)))
        loss_fn = lambda out, y: nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))
    elif a.model in ("lstm", "gru"):
        model = Recurrent(a.model)
        make = lambda: (torch.randn(batch, 8, 16, dtype=dtype), torch.randint(0, 4, (batch,)))
        loss_fn = nn.functional.cross_entropy
    else:
        sys.exit(f"unknown model {a.model}")
    model = model.to(dtype)
    foreach = a.model == "gpt_adam"
    if foreach:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # torch 2.x clips in foreach form too (_foreach_mul_); 1.13 has no such argument
    clip_args = {"foreach": True} if foreach and int(torch.__version__.split(".")[0]) >= 2 else {}
    model.train()
    times = []
    for step in range(a.steps):
        begin = time.perf_counter()
        x, y = make()
        loss = loss_fn(model(x).float(), y)
        loss.backward()
        if foreach:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0, **clip_args)
        opt.step()
        opt.zero_grad()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
        times.append(time.perf_counter() - begin)
        if a.print_steps:
            print(f"step {step} time {times[-1] * 1e3:.3f} ms", flush=True)
    if a.time and len(times) > 2:
        print(f"median step: {statistics.median(times[2:]) * 1e3:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
