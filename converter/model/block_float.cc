#include "converter/model/block_float.h"

#include <cmath>

namespace edgeattn {
namespace convert {

void layernorm_forward(const FloatNorm& n, int rows, const double* x, double* y) {
  for (int r = 0; r < rows; ++r) {
    const double* xr = x + static_cast<size_t>(r) * n.dim;
    double* yr = y + static_cast<size_t>(r) * n.dim;
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < n.dim; ++i) mean += xr[i];
    mean /= n.dim;
    for (int i = 0; i < n.dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= n.dim;
    const double inv = 1.0 / std::sqrt(var + n.eps);
    for (int i = 0; i < n.dim; ++i) yr[i] = (xr[i] - mean) * inv * n.gain[i] + n.bias[i];
  }
}

bool parse_activation(const std::string& name, Activation* act) {
  if (name == "relu") {
    *act = Activation::kRelu;
  } else if (name == "gelu") {
    *act = Activation::kGeluErf;
  } else if (name == "gelu_tanh" || name == "gelu_new") {
    *act = Activation::kGeluTanh;
  } else if (name == "silu" || name == "swish") {
    *act = Activation::kSilu;
  } else {
    return false;
  }
  return true;
}

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::kRelu: return "relu";
    case Activation::kGeluErf: return "gelu";
    case Activation::kGeluTanh: return "gelu_tanh";
    case Activation::kSilu: return "silu";
  }
  return "?";
}

double activate(Activation act, double x) {
  switch (act) {
    case Activation::kRelu: return x > 0.0 ? x : 0.0;
    case Activation::kGeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::kSilu: return x / (1.0 + std::exp(-x));
  }
  return x;
}

namespace {

// y [rows][out] = x [rows][in] W^T + b (W row-major [out][in]).
void dense(const FloatLinear& l, int rows, const double* x, double* y) {
  for (int r = 0; r < rows; ++r) {
    const double* xr = x + static_cast<size_t>(r) * l.in;
    for (int o = 0; o < l.out; ++o) {
      const double* w = l.w.data() + static_cast<size_t>(o) * l.in;
      double acc = l.b.empty() ? 0.0 : l.b[o];
      for (int k = 0; k < l.in; ++k) acc += w[k] * xr[k];
      y[static_cast<size_t>(r) * l.out + o] = acc;
    }
  }
}

}  // namespace

void ffn_forward(const FloatFfn& f, int rows, const double* x, double* y,
                 std::vector<double>* hidden_pre, std::vector<double>* hidden_post) {
  std::vector<double> h(static_cast<size_t>(rows) * f.hidden);
  dense(f.fc1, rows, x, h.data());
  if (hidden_pre != nullptr) *hidden_pre = h;
  for (double& v : h) v = activate(f.act, v);
  if (hidden_post != nullptr) *hidden_post = h;
  dense(f.fc2, rows, h.data(), y);
}

}  // namespace convert
}  // namespace edgeattn
