// Random float tensors for the in-process model builders of the property
// tests (converter library arrays; values N(0, sd^2) from the test Rng).
#ifndef EDGEATTN_TESTS_PROPERTY_RANDOM_ARRAYS_H_
#define EDGEATTN_TESTS_PROPERTY_RANDOM_ARRAYS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "converter/base/array.h"
#include "test_models.h"

namespace eatest {

inline edgeattn::convert::Array RandomArray(Rng& rng, std::vector<size_t> shape, double sd,
                                            const std::string& dtype = "<f4") {
  edgeattn::convert::Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(a.numel());
  for (double& v : a.data) v = rng.normal() * sd;
  return a;
}

}  // namespace eatest

#endif  // EDGEATTN_TESTS_PROPERTY_RANDOM_ARRAYS_H_
