// Additive (Bahdanau) attention, with optional coverage: the module
// (kinds::kind_additive) and its parameters.
#ifndef EDGEATTN_CONVERTER_KINDS_ADDITIVE_H_
#define EDGEATTN_CONVERTER_KINDS_ADDITIVE_H_

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

// score = v^T tanh(w_q q + b_q + w_k k + b_k) + b_v, every bias optional,
// as PyTorch computes it (the float reference uses these tensors as they
// are). The file has no b_q: the converter folds it into w_k's bias; b_v
// adds the same constant to every score of a row, which the softmax cancels.
// Coverage: w_c [attn_dim] (PyTorch W_c = nn.Linear(1, attn_dim, bias=False),
// weight [attn_dim, 1]); the query rows of a sample are the successive
// decoding steps of one sequence (coverage starts at 0).
struct AdditiveParams : KindParamsOf<AdditiveParams> {
  int attn_dim = 0;
  FloatLinear w_q, w_k;  // with b_q, b_k
  std::vector<double> v;
  std::string v_name;
  double b_v = 0.0;
  std::string b_v_name;  // "": none
  // nn.Linear biases the spec leaves out ('M.bias' beside a used 'M.weight',
  // converted with --allow-unused): PyTorch adds them, the model does not.
  // Only the float reference does, so the accuracy report shows what leaving
  // them out costs. Empty / 0: none.
  std::vector<double> unmapped_b_q, unmapped_b_k;
  double unmapped_b_v = 0.0;
  bool coverage = false;
  std::vector<double> w_c;
  std::string w_c_name;
};


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_ADDITIVE_H_
