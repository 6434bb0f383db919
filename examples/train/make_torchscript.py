"""Writes the example TorchScript model for `acccheck dump --model` (run at build time by CMake
with the build's Python when its torch can script a module): a small pre-norm block — layer norm,
linear, gelu, softmax over a linear head — scripted, with fixed weights (seed 0).

  .venv/bin/python make_torchscript.py OUT.pt        # input: a float tensor [batch, 16]
"""
import sys

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(16)
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))
        return torch.softmax(self.head(x), dim=-1)


torch.manual_seed(0)
torch.jit.script(Block()).save(sys.argv[1])
