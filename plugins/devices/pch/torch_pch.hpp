// Torch headers every device plugin uses; compiled once as a precompiled header.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/version.h>
