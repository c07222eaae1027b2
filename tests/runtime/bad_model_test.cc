// Model::Load on damaged or lying files: each case must return its specific
// status with a non-empty message, and never crash. Fields are patched in a
// copy of a converted file through the generated FlatBuffers accessors
// (flatbuffers::Table::SetField / Vector::Mutate on fields present in the
// buffer; the schema is compiled without --gen-mutable), and the file
// checksum is then re-sealed (eatest::SealModel), as a converter with that
// bug would have written it: these are the checks behind the checksum
// (integrity_test.cc covers the checksum itself).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "flatbuffers/flatbuffers.h"
#include "test_models.h"

namespace fb = edgeattn::fb;
using edgeattn::Model;
using edgeattn::Status;
using eatest::AlignedBuffer;

namespace {

AlignedBuffer ReadModel(const std::string& name) {
  AlignedBuffer b;
  EXPECT_TRUE(eatest::ReadFile(eatest::ModelPath(name), &b)) << eatest::ModelPath(name);
  return b;
}

Status LoadStatus(const uint8_t* data, size_t size, std::string* msg) {
  Model m;
  const Status s = m.Load(data, size);
  *msg = m.error();
  if (s != Status::kOk) {
    EXPECT_FALSE(m.loaded());
  }
  return s;
}

// Applies `patch` to a copy of the model and expects `want` plus a message.
void ExpectPatched(const std::string& model, const char* what, Status want,
                   const std::function<bool(fb::Model*, uint8_t* base)>& patch) {
  AlignedBuffer b = ReadModel(model);
  auto* root = flatbuffers::GetMutableRoot<fb::Model>(b.data());
  ASSERT_TRUE(patch(root, b.data())) << model << ": patch '" << what << "' could not be applied (field absent?)";
  eatest::SealModel(&b);
  std::string msg;
  const Status s = LoadStatus(b.data(), b.size(), &msg);
  EXPECT_EQ(s, want) << model << ": " << what << " -> " << edgeattn::status_string(s) << " (" << msg << ")";
  EXPECT_FALSE(msg.empty()) << model << ": " << what;
}

template <typename T>
T* Mut(const T* p) { return const_cast<T*>(p); }

// Scalar field of any generated table.
template <typename T, typename Table>
bool SetScalar(const Table* t, flatbuffers::voffset_t field, T v) {
  return t != nullptr && reinterpret_cast<flatbuffers::Table*>(Mut(t))->SetField<T>(field, v, T{});
  // (generated tables inherit privately from flatbuffers::Table and add no members)
}

// Points the table field `field` of `t` at `target`, another table of the
// same type later in the buffer (a uoffset points forward): a file whose
// projection is another layer's table, as a converter with that bug wrote it.
template <typename Table, typename Target>
bool Redirect(const Table* t, flatbuffers::voffset_t field, const Target* target) {
  if (t == nullptr || target == nullptr) return false;
  uint8_t* at = reinterpret_cast<flatbuffers::Table*>(Mut(t))->GetAddressOf(field);
  const uint8_t* to = reinterpret_cast<const uint8_t*>(target);
  if (at == nullptr || to <= at) return false;
  flatbuffers::WriteScalar<flatbuffers::uoffset_t>(at, static_cast<flatbuffers::uoffset_t>(to - at));
  return true;
}

int FindLayer(fb::Model* m, fb::LayerOptions kind) {
  for (uint32_t i = 0; i < m->layers()->size(); ++i) {
    if (m->layers()->Get(i)->options_type() == kind) return static_cast<int>(i);
  }
  return -1;
}

const fb::MultiHeadAttention* FirstMha(fb::Model* m) {
  const int i = FindLayer(m, fb::LayerOptions::MultiHeadAttention);
  return i < 0 ? nullptr : m->layers()->Get(static_cast<uint32_t>(i))->options_as_MultiHeadAttention();
}

const fb::AdditiveAttention* FirstAdditive(fb::Model* m) {
  const int i = FindLayer(m, fb::LayerOptions::AdditiveAttention);
  return i < 0 ? nullptr : m->layers()->Get(static_cast<uint32_t>(i))->options_as_AdditiveAttention();
}

const char* kInt8 = "fixture_int8";
const char* kF32 = "fixture_f32";

TEST(BadModel, EmptyBuffer) {
  AlignedBuffer b = ReadModel(kInt8);
  std::string msg;
  EXPECT_EQ(LoadStatus(b.data(), 0, &msg), Status::kInvalidArgument);
  EXPECT_FALSE(msg.empty());
  EXPECT_EQ(LoadStatus(nullptr, 0, &msg), Status::kInvalidArgument);
  EXPECT_FALSE(msg.empty());
}

TEST(BadModel, EveryTruncation) {
  for (const char* name : {kInt8, kF32}) {
    const AlignedBuffer full = ReadModel(name);
    ASSERT_GT(full.size(), 64u);
    // Every prefix when small, otherwise 400 evenly spread lengths plus the last 64.
    std::vector<size_t> lengths;
    if (full.size() <= 100000) {
      for (size_t n = 1; n < full.size(); ++n) lengths.push_back(n);
    } else {
      for (size_t i = 0; i < 400; ++i) lengths.push_back(1 + i * (full.size() - 1) / 400);
      for (size_t n = full.size() - 64; n < full.size(); ++n) lengths.push_back(n);
    }
    int failures = 0;
    for (size_t n : lengths) {
      AlignedBuffer b(n);
      std::memcpy(b.data(), full.data(), n);
      std::string msg;
      const Status s = LoadStatus(b.data(), n, &msg);
      // Format 3: a prefix no longer ends in its own CRC-32, so every prefix
      // fails the file checksum (or is too short to be a model at all).
      const Status want = n < 12 ? Status::kInvalidModel : Status::kCrcMismatch;
      if (s != want || msg.empty()) {
        ADD_FAILURE() << name << ": prefix of " << n << " / " << full.size() << " bytes -> "
                      << edgeattn::status_string(s) << " (" << msg << ")";
        if (++failures > 10) break;
      }
    }
  }
}

TEST(BadModel, RandomBytes) {
  eatest::Rng rng(0xBAD);
  for (int i = 0; i < 300; ++i) {
    const size_t n = static_cast<size_t>(rng.uniform_int(1, 4096));
    AlignedBuffer b(n);
    for (size_t k = 0; k < n; ++k) b.data()[k] = static_cast<uint8_t>(rng.next());
    if (i % 2 == 0 && n >= 8) std::memcpy(b.data() + 4, "EATN", 4);  // get past the identifier check
    std::string msg;
    const Status s = LoadStatus(b.data(), n, &msg);
    EXPECT_TRUE(s == Status::kInvalidModel || s == Status::kCrcMismatch) << "case " << i << " seed 0xBAD size " << n
                                                                             << " -> " << edgeattn::status_string(s);
    EXPECT_FALSE(msg.empty()) << "case " << i;
  }
}

TEST(BadModel, RandomByteFlipsNeverCrash) {
  // Any single corrupted byte: loading must return (any status) without crashing;
  // if it still loads, every layer must still run.
  for (const char* name : {kInt8, kF32}) {
    const AlignedBuffer full = ReadModel(name);
    eatest::Rng rng(0xF11B);
    for (int i = 0; i < 300; ++i) {
      AlignedBuffer b = full;
      const size_t pos = static_cast<size_t>(rng.uniform_int(0, static_cast<int>(full.size()) - 1));
      b.data()[pos] ^= static_cast<uint8_t>(1u << rng.uniform_int(0, 7));
      // Re-sealed: the checks behind the file checksum (integrity_test.cc
      // shows the checksum itself refuses every flip).
      if (pos + 4 < b.size()) eatest::SealModel(&b);
      Model m;
      const Status s = m.Load(b.data(), b.size());
      if (s != Status::kOk) {
        EXPECT_STRNE(m.error(), "") << name << " flip at " << pos;
        continue;
      }
      AlignedBuffer arena(m.arena_bytes());
      edgeattn::Interpreter interp;
      ASSERT_EQ(interp.Init(&m, arena.data(), m.arena_bytes()), Status::kOk);
      for (int l = 0; l < m.num_layers(); ++l) {
        edgeattn::LayerInfo info;
        ASSERT_EQ(m.GetLayerInfo(l, &info), Status::kOk);
        eatest::LayerIo io;
        io.Make(info, info.max_q_len, info.max_kv_len, rng);
        EXPECT_EQ(interp.Run(l, io.Args(-1)), Status::kOk) << name << " flip at " << pos << ": " << interp.error();
      }
    }
  }
}

TEST(BadModel, WrongFileIdentifier) {
  AlignedBuffer b = ReadModel(kInt8);
  b.data()[4] = 'X';
  std::string msg;
  EXPECT_EQ(LoadStatus(b.data(), b.size(), &msg), Status::kInvalidModel);
  EXPECT_FALSE(msg.empty());
}

TEST(BadModel, WrongFormatVersion) {
  // 1 to 5: earlier formats, which must be re-converted (4: the separate
  // int8 residual adds of the blocks; 5: no graph); 7: a later one.
  for (uint32_t v : {0u, 1u, 2u, 3u, 4u, 5u, 7u, 0xFFFFFFFFu}) {
    ExpectPatched(kInt8, "format_version", Status::kVersionMismatch, [v](fb::Model* m, uint8_t*) {
      return SetScalar<uint32_t>(m, fb::Model::VT_FORMAT_VERSION, v);
    });
  }
  AlignedBuffer b = ReadModel(kInt8);
  ASSERT_TRUE(SetScalar<uint32_t>(flatbuffers::GetMutableRoot<fb::Model>(b.data()),
                                  fb::Model::VT_FORMAT_VERSION, 1u));
  eatest::SealModel(&b);
  std::string msg;
  ASSERT_EQ(LoadStatus(b.data(), b.size(), &msg), Status::kVersionMismatch);
  EXPECT_NE(msg.find("format version 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("re-convert"), std::string::npos) << msg;
}

TEST(BadModel, FlippedWeightByteIsCrcMismatch) {
  for (const char* name : {kInt8, kF32}) {
    const AlignedBuffer full = ReadModel(name);
    const fb::Model* root = fb::GetModel(full.data());
    ASSERT_NE(root->data(), nullptr);
    const size_t begin = static_cast<size_t>(root->data()->data() - full.data());
    const size_t n = root->data()->size();
    ASSERT_GT(n, 0u);
    for (size_t k : {size_t{0}, n / 3, n / 2, n - 1}) {
      AlignedBuffer b = full;
      b.data()[begin + k] ^= 0x01;
      std::string msg;
      EXPECT_EQ(LoadStatus(b.data(), b.size(), &msg), Status::kCrcMismatch) << name << " data byte " << k;
      EXPECT_FALSE(msg.empty());
    }
  }
}

// F6 (docs/security.md): an int8 bias without room for in_features int8
// products in the int32 accumulator (the kernels would overflow) is refused at
// load with a message, also when the file's CRC has been re-sealed; the bound
// itself (|bias| <= INT32_MAX - in * 2^14) still loads.
TEST(BadModel, Int8BiasWithoutAccumulatorHeadroom) {
  for (int32_t delta : {0, 1}) {
    AlignedBuffer b = ReadModel(kInt8);
    auto* root = flatbuffers::GetMutableRoot<fb::Model>(b.data());
    const uint8_t* data = root->data()->data();
    const auto* q = FirstMha(root)->q_proj();
    const int64_t headroom = int64_t{q->in_features()} * 128 * 128;
    const int32_t bias = static_cast<int32_t>(INT32_MAX - headroom + delta);
    std::memcpy(b.data() + (data - b.data()) + q->bias()->offset() + 4, &bias, 4);  // channel 1
    eatest::SealModel(&b);
    std::string msg;
    const Status s = LoadStatus(b.data(), b.size(), &msg);
    if (delta == 0) {
      EXPECT_EQ(s, Status::kOk) << msg;
    } else {
      EXPECT_EQ(s, Status::kInvalidModel);
      EXPECT_NE(msg.find("bias[1]"), std::string::npos) << msg;
      EXPECT_NE(msg.find("accumulator"), std::string::npos) << msg;
    }
  }
}

// F8 (docs/security.md): a pooling kind's query is its learned row, so Run
// writes one output row whatever max_q_len says; a file claiming more rows
// (a fuzzed digits_vit row_pool) is refused at load, naming both.
TEST(BadModel, PoolingKindsTakeOneQueryRow) {
  struct Case {
    const char* model;
    fb::LayerOptions kind;
  };
  for (const Case& c : {Case{"digits_vit_int8", fb::LayerOptions::RowPool}, Case{"pooling_int8", fb::LayerOptions::AttentionPooling},
                        Case{"pooling_f32", fb::LayerOptions::AttentionPooling}}) {
    for (uint32_t q : {1u, 2u, 14u}) {
      AlignedBuffer b = ReadModel(c.model);
      auto* root = flatbuffers::GetMutableRoot<fb::Model>(b.data());
      const int i = FindLayer(root, c.kind);
      ASSERT_GE(i, 0) << c.model;
      const auto* l = root->layers()->Get(static_cast<uint32_t>(i));
      ASSERT_EQ(l->max_q_len(), 1u) << c.model << ": the converter writes 1";
      ASSERT_TRUE(SetScalar<uint32_t>(l, fb::Layer::VT_MAX_Q_LEN, q));
      eatest::SealModel(&b);
      std::string msg;
      const Status s = LoadStatus(b.data(), b.size(), &msg);
      if (q == 1) {
        EXPECT_EQ(s, Status::kOk) << c.model << ": " << msg;
        continue;
      }
      EXPECT_EQ(s, Status::kInvalidModel) << c.model << " max_q_len " << q;
      EXPECT_NE(msg.find("max_q_len " + std::to_string(q)), std::string::npos) << msg;
      EXPECT_NE(msg.find("query length is 1"), std::string::npos) << msg;
      EXPECT_NE(msg.find(l->name()->str()), std::string::npos) << msg;
    }
  }
}

TEST(BadModel, MisalignedBuffer) {
  const AlignedBuffer full = ReadModel(kInt8);
  for (size_t off : {size_t{1}, size_t{4}, size_t{8}}) {
    AlignedBuffer b(full.size(), off);
    std::memcpy(b.data(), full.data(), full.size());
    std::string msg;
    EXPECT_EQ(LoadStatus(b.data(), b.size(), &msg), Status::kInvalidArgument) << "offset " << off;
    EXPECT_FALSE(msg.empty());
  }
}

TEST(BadModel, ShapesThatLie) {
  for (const char* name : {kInt8, kF32}) {
    ExpectPatched(name, "MHA embed_dim + 1", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* a = FirstMha(m);
      return SetScalar<uint32_t>(a, fb::MultiHeadAttention::VT_EMBED_DIM, a->embed_dim() + 1);
    });
    ExpectPatched(name, "MHA num_heads * 2", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* a = FirstMha(m);
      return SetScalar<uint32_t>(a, fb::MultiHeadAttention::VT_NUM_HEADS, a->num_heads() * 2);
    });
    ExpectPatched(name, "q_proj in_features", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* l = FirstMha(m)->q_proj();
      return SetScalar<uint32_t>(l, fb::Linear::VT_IN_FEATURES, l->in_features() + 16);
    });
    ExpectPatched(name, "q_proj weight shape[1]", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* shape = FirstMha(m)->q_proj()->weight()->shape();
      Mut(shape)->Mutate(1, shape->Get(1) + 1);
      return true;
    });
    ExpectPatched(name, "q_proj weight shape[0] huge", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      Mut(FirstMha(m)->q_proj()->weight()->shape())->Mutate(0, 0x40000000u);
      return true;
    });
    ExpectPatched(name, "k_proj weight size", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* t = FirstMha(m)->k_proj()->weight();
      return SetScalar<uint64_t>(t, fb::Tensor::VT_SIZE, t->size() + 16);
    });
    ExpectPatched(name, "v_proj weight offset past data", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* t = FirstMha(m)->v_proj()->weight();
      return SetScalar<uint64_t>(t, fb::Tensor::VT_OFFSET, (m->data()->size() + 15) / 16 * 16);
    });
    ExpectPatched(name, "out_proj weight offset misaligned", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* t = FirstMha(m)->out_proj()->weight();
      return SetScalar<uint64_t>(t, fb::Tensor::VT_OFFSET, t->offset() + 4);
    });
    ExpectPatched(name, "row_stride < cols", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* t = FirstMha(m)->q_proj()->weight();
      return SetScalar<uint32_t>(t, fb::Tensor::VT_ROW_STRIDE, t->row_stride() / 2);
    });
    ExpectPatched(name, "weight layout not the one its dtype needs", Status::kInvalidModel,
                  [](fb::Model* m, uint8_t*) {
                    const auto* t = FirstMha(m)->k_proj()->weight();
                    // int8 weights are packed (written explicitly); float ones are
                    // row-major (the default, absent from the buffer, so set the
                    // int8 case only and flip the float case's stride instead).
                    if (t->dtype() == fb::DType::S8) {
                      return SetScalar<int8_t>(t, fb::Tensor::VT_LAYOUT, 0);
                    }
                    return SetScalar<uint32_t>(t, fb::Tensor::VT_ROW_STRIDE, 1);
                  });
    ExpectPatched(name, "layer max_q_len huge", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      return SetScalar<uint32_t>(m->layers()->Get(0), fb::Layer::VT_MAX_Q_LEN, 1000000u);
    });
    ExpectPatched(name, "layer max_kv_len + 1 (arena no longer matches)", Status::kInvalidModel,
                  [](fb::Model* m, uint8_t*) {
                    const auto* l = m->layers()->Get(0);
                    return SetScalar<uint32_t>(l, fb::Layer::VT_MAX_KV_LEN, l->max_kv_len() + 1) &&
                           SetScalar<uint32_t>(l, fb::Layer::VT_MAX_Q_LEN, l->max_q_len() + 1);
                  });
    ExpectPatched(name, "layer arena_bytes + 16", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* l = m->layers()->Get(0);
      return SetScalar<uint64_t>(l, fb::Layer::VT_ARENA_BYTES, l->arena_bytes() + 16);
    });
    ExpectPatched(name, "model arena_bytes - 16", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      return SetScalar<uint64_t>(m, fb::Model::VT_ARENA_BYTES, m->arena_bytes() - 16);
    });
    ExpectPatched(name, "additive attn_dim + 1", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      const auto* a = FirstAdditive(m);
      return SetScalar<uint32_t>(a, fb::AdditiveAttention::VT_ATTN_DIM, a->attn_dim() + 1);
    });
    ExpectPatched(name, "MHA scale NaN", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
      return SetScalar<float>(FirstMha(m), fb::MultiHeadAttention::VT_SCALE, std::numeric_limits<float>::quiet_NaN());
    });
  }
}

TEST(BadModel, BadQuantizationParameters) {
  const float bad_scales[] = {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity()};
  for (float v : bad_scales) {
    ExpectPatched(kInt8, "q_proj input scale", Status::kInvalidModel, [v](fb::Model* m, uint8_t*) {
      return SetScalar<float>(FirstMha(m)->q_proj()->input(), fb::ActQuant::VT_SCALE, v);
    });
    ExpectPatched(kInt8, "out_proj output scale", Status::kInvalidModel, [v](fb::Model* m, uint8_t*) {
      return SetScalar<float>(FirstMha(m)->out_proj()->output(), fb::ActQuant::VT_SCALE, v);
    });
    ExpectPatched(kInt8, "q_proj weight scale[0]", Status::kInvalidModel, [v](fb::Model* m, uint8_t*) {
      Mut(FirstMha(m)->q_proj()->weight()->scale())->Mutate(0, v);
      return true;
    });
  }
  for (int32_t mult : {0, 1, (1 << 30) - 1, -1, INT32_MIN}) {
    ExpectPatched(kInt8, "q_proj requant multiplier[0]", Status::kInvalidModel, [mult](fb::Model* m, uint8_t*) {
      Mut(FirstMha(m)->q_proj()->requant()->multiplier())->Mutate(0, mult);
      return true;
    });
    ExpectPatched(kInt8, "softmax score_multiplier", Status::kInvalidModel, [mult](fb::Model* m, uint8_t*) {
      return SetScalar<int32_t>(FirstMha(m)->softmax(), fb::SoftmaxQuant::VT_SCORE_MULTIPLIER, mult);
    });
    ExpectPatched(kInt8, "softmax pv_multiplier", Status::kInvalidModel, [mult](fb::Model* m, uint8_t*) {
      return SetScalar<int32_t>(FirstMha(m)->softmax(), fb::SoftmaxQuant::VT_PV_MULTIPLIER, mult);
    });
  }
  for (int32_t shift : {31, 100, -32, INT32_MIN}) {
    ExpectPatched(kInt8, "k_proj requant shift[0]", Status::kInvalidModel, [shift](fb::Model* m, uint8_t*) {
      Mut(FirstMha(m)->k_proj()->requant()->shift())->Mutate(0, shift);
      return true;
    });
  }
  ExpectPatched(kInt8, "v_proj output zero point 200", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
    return SetScalar<int32_t>(FirstMha(m)->v_proj()->output(), fb::ActQuant::VT_ZERO_POINT, 200);
  });
  ExpectPatched(kInt8, "additive pre_tanh multiplier[0] = 0", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
    Mut(FirstAdditive(m)->pre_tanh()->multiplier())->Mutate(0, 0);
    return true;
  });
  ExpectPatched(kInt8, "additive value_input scale 0", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
    return SetScalar<float>(FirstAdditive(m)->value_input(), fb::ActQuant::VT_SCALE, 0.0f);
  });  // Coverage: a multiplier above 1 (shift > 0) or out of range is refused;
  // a coverage model read as plain additive records arena bytes that include
  // the coverage vector, which the plain plan does not have.
  const char* cov = "fixture_coverage_int8";
  ExpectPatched(cov, "coverage shift 1", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
    return SetScalar<int32_t>(FirstAdditive(m), fb::AdditiveAttention::VT_COVERAGE_SHIFT, 1);
  });
  ExpectPatched(cov, "coverage multiplier 5", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
    return SetScalar<int32_t>(FirstAdditive(m), fb::AdditiveAttention::VT_COVERAGE_MULTIPLIER, 5);
  });
  ExpectPatched(cov, "coverage flag cleared", Status::kInvalidModel, [](fb::Model* m, uint8_t*) {
    return SetScalar<uint8_t>(FirstAdditive(m), fb::AdditiveAttention::VT_COVERAGE, 0);
  });
}

TEST(BadModel, CApiReportsTheSameStatuses) {
  AlignedBuffer b = ReadModel(kInt8);
  ea_model m;
  EXPECT_EQ(ea_model_load(nullptr, b.data(), b.size()), EA_INVALID_ARGUMENT);
  EXPECT_EQ(ea_model_load(&m, b.data(), 0), EA_INVALID_ARGUMENT);
  EXPECT_STRNE(ea_model_error(&m), "");
  b.data()[5] = 'Z';
  EXPECT_EQ(ea_model_load(&m, b.data(), b.size()), EA_INVALID_MODEL);
  EXPECT_STRNE(ea_model_error(&m), "");
  EXPECT_STRNE(ea_status_string(EA_CRC_MISMATCH), "");
}

}  // namespace

// A patch of a converted model's fields and the message load must give.
struct FieldCase {
  const char* what;
  std::function<bool(fb::Model*)> patch;
  const char* message;
};

// Whether this build converted the model `name` (its bundled sources exist).
bool Converted(const std::string& name) {
  for (const std::string& m : eatest::AllModels()) {
    if (m == name) return true;
  }
  return false;
}

// Each case refused at load with kInvalidModel, and with its message once
// the file's checksum is resealed (as a converter that wrote these fields would).
template <size_t N>
void ExpectFieldsRefused(const std::string& name, const FieldCase (&cases)[N]) {
  for (const FieldCase& c : cases) {
    std::string msg;
    ExpectPatched(name, c.what, Status::kInvalidModel, [&](fb::Model* m, uint8_t*) { return c.patch(m); });
    AlignedBuffer b = ReadModel(name);
    ASSERT_TRUE(c.patch(flatbuffers::GetMutableRoot<fb::Model>(b.data()))) << c.what;
    eatest::SealModel(&b);
    LoadStatus(b.data(), b.size(), &msg);
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": " << msg;
  }
}

// The block kinds' own fields (models/encoder_block, int8): every one that
// could make a wrong model is refused at load with a message naming it.
const fb::Layer* BlockLayer(fb::Model* m, fb::LayerOptions kind) {
  const int i = FindLayer(m, kind);
  return i < 0 ? nullptr : m->layers()->Get(static_cast<uint32_t>(i));
}

TEST(BadModel, BlockKindsFields) {
  const std::string name = "encoder_block_int8";
  if (!Converted(name)) GTEST_SKIP() << "models/encoder_block not converted in this build";
  const FieldCase cases[] = {
      {"norm1's output scale differs from self_attn's input",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::EncoderBlock);  // "pre": pre-norm
         return l != nullptr && SetScalar<float>(l->options_as_EncoderBlock()->norm1()->output(),
                                                 fb::ActQuant::VT_SCALE, 0.5f);
       },
       "norm1's output / self_attn's input"},
      {"residual add shift 0",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::EncoderBlock);
         return l != nullptr && SetScalar<int32_t>(l->options_as_EncoderBlock()->add2(), fb::ResidualAdd::VT_SHIFT, 0);
       },
       "residual add add2"},
      // Contract 5b's bounds: n <= 16 and A < 2^20 keep its int32 sum exact.
      {"residual add shift 17",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::EncoderBlock);
         return l != nullptr && SetScalar<int32_t>(l->options_as_EncoderBlock()->add1(), fb::ResidualAdd::VT_SHIFT, 17);
       },
       "residual add add1: multiplier"},
      {"residual multiplier 2^20",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::EncoderBlock);
         return l != nullptr && SetScalar<int32_t>(l->options_as_EncoderBlock()->add2(),
                                                   fb::ResidualAdd::VT_A_MULTIPLIER, 1 << 20);
       },
       "residual add add2: multiplier 1048576"},
      // The add runs in fc2's epilogue: fc2 writes the add's output.
      {"add2's output quantization differs from fc2's",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::EncoderBlock);
         return l != nullptr && SetScalar<int32_t>(l->options_as_EncoderBlock()->add2()->output(),
                                                   fb::ActQuant::VT_ZERO_POINT, 77);
       },
       "residual add add2: its output quantization differs from the projection computing it"},
      {"unknown activation",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::EncoderBlock);
         return l != nullptr && SetScalar<int8_t>(l->options_as_EncoderBlock()->ffn(), fb::FeedForward::VT_ACTIVATION, 9);
       },
       "unknown activation 9"},
      {"LayerNorm eps_term 0",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::LayerNorm);
         return l != nullptr && SetScalar<int64_t>(l->options_as_LayerNorm(), fb::LayerNorm::VT_EPS_TERM, 0);
       },
       "eps_term 0 is outside"},
      {"LayerNorm eps 0",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::LayerNorm);
         return l != nullptr && SetScalar<float>(l->options_as_LayerNorm(), fb::LayerNorm::VT_EPS, 0.0f);
       },
       "LayerNorm eps must be finite and > 0"},
      {"FFN width that fc2 does not have",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::FeedForward);
         return l != nullptr &&
                SetScalar<uint32_t>(l->options_as_FeedForward(), fb::FeedForward::VT_HIDDEN_DIM, 64);
       },
       "fc1 is"},
      // The decoder block ("dec_pre", pre-norm, is the first DecoderBlock).
      {"decoder: norm2's output scale differs from cross_attn's query input",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::DecoderBlock);
         return l != nullptr && SetScalar<float>(l->options_as_DecoderBlock()->norm2()->output(),
                                                 fb::ActQuant::VT_SCALE, 0.5f);
       },
       "norm2's output / cross_attn's query input"},
      {"decoder: the memory quantized differently for the key and value projections",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::DecoderBlock);
         return l != nullptr && SetScalar<float>(l->options_as_DecoderBlock()->cross_attn()->v_proj()->input(),
                                                 fb::ActQuant::VT_SCALE, 0.5f);
       },
       "cross_attn's key / value input"},
      {"decoder: residual add3 shift 0",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::DecoderBlock);
         return l != nullptr && SetScalar<int32_t>(l->options_as_DecoderBlock()->add3(), fb::ResidualAdd::VT_SHIFT, 0);
       },
       "residual add add3"},
      {"decoder: self-attention not causal",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::DecoderBlock);
         return l != nullptr && SetScalar<uint8_t>(l->options_as_DecoderBlock()->self_attn(),
                                                   fb::MultiHeadAttention::VT_CAUSAL, 0);
       },
       "kv_cache needs causal self-attention"},
      {"decoder: cross-attention with another head count",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::DecoderBlock);
         return l != nullptr && SetScalar<uint32_t>(l->options_as_DecoderBlock()->cross_attn(),
                                                    fb::MultiHeadAttention::VT_HEAD_DIM, 8);
       },
       "num_heads 4 x head_dim 8 != embed_dim 64"},
      // The linear layer ("head", 64 -> 20): widths its weight does not have.
      {"linear: in_features the weight does not have",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::Linear);
         return l != nullptr && SetScalar<uint32_t>(l->options_as_Linear(), fb::Linear::VT_IN_FEATURES, 63);
       },
       "tensor 'head.weight' has shape that does not match 20 x 63"},
      {"linear: out_features the weight does not have",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::Linear);
         return l != nullptr && SetScalar<uint32_t>(l->options_as_Linear(), fb::Linear::VT_OUT_FEATURES, 16);
       },
       "tensor 'head.weight' has shape that does not match 16 x 64"},
      {"linear: in_features 0",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::Linear);
         return l != nullptr && SetScalar<uint32_t>(l->options_as_Linear(), fb::Linear::VT_IN_FEATURES, 0);
       },
       "in_features = 0 is outside"},
      {"linear: float weight in an int8 layer",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::Linear);
         return l != nullptr && SetScalar<int8_t>(l->options_as_Linear()->weight(), fb::Tensor::VT_DTYPE,
                                                  static_cast<int8_t>(fb::DType::F32));
       },
       "tensor 'head.weight' is F32, expected S8"},
      {"linear: negative output scale",
       [](fb::Model* m) {
         const fb::Layer* l = BlockLayer(m, fb::LayerOptions::Linear);
         return l != nullptr && SetScalar<float>(l->options_as_Linear()->output(), fb::ActQuant::VT_SCALE, -1.0f);
       },
       "linear must be finite and > 0"},
  };
  ExpectFieldsRefused(name, cases);
}

// The 16-bit residual stream (issue 37, encoder_block_int8_res16: "pre" is
// pre-norm, "post" post-norm): the stream's tensors must be int16 with zero
// point 0 and a positive scale, contract 5c's A and n in range, and a block
// whose flag says int8 must not carry int16 LayerNorms.
TEST(BadModel, Residual16Fields) {
  const std::string name = "encoder_block_int8_res16";
  if (!Converted(name)) GTEST_SKIP() << "models/encoder_block not converted in this build";
  const auto block = [](fb::Model* m, const char* layer) -> const fb::EncoderBlock* {
    for (uint32_t i = 0; i < m->layers()->size(); ++i) {
      if (m->layers()->Get(i)->name()->str() == layer) return m->layers()->Get(i)->options_as_EncoderBlock();
    }
    return nullptr;
  };
  const auto decoder = [](fb::Model* m, const char* layer) -> const fb::DecoderBlock* {
    for (uint32_t i = 0; i < m->layers()->size(); ++i) {
      if (m->layers()->Get(i)->name()->str() == layer) return m->layers()->Get(i)->options_as_DecoderBlock();
    }
    return nullptr;
  };
  const FieldCase cases[] = {
      {"dec_pre: add3 shift 14",
       [&](fb::Model* m) {
         const auto* b = decoder(m, "dec_pre");
         return b != nullptr && SetScalar<int32_t>(b->add3(), fb::ResidualAdd::VT_SHIFT, 14);
       },
       "residual add add3 (int16 stream): multiplier"},
      {"dec_post: norm3's int16 output with zero point 2",
       [&](fb::Model* m) {
         const auto* b = decoder(m, "dec_post");
         return b != nullptr && SetScalar<int32_t>(b->norm3()->output16(), fb::ActQuant::VT_ZERO_POINT, 2);
       },
       "norm3 is int16 (the residual stream) with zero point 2, must be 0"},
      {"dec_post: the flag says int8",
       [&](fb::Model* m) {
         const auto* b = decoder(m, "dec_post");
         return b != nullptr && SetScalar<uint8_t>(b, fb::DecoderBlock::VT_RESIDUAL16, 0);
       },
       "LayerNorms on an int16 stream in a block whose residual stream is int8"},
      {"pre: the int16 input with zero point 5",
       [&](fb::Model* m) {
         const auto* b = block(m, "pre");
         return b != nullptr && SetScalar<int32_t>(b->norm1()->input(), fb::ActQuant::VT_ZERO_POINT, 5);
       },
       "norm1 is int16 (the residual stream) with zero point 5, must be 0"},
      {"pre: add1's residual with zero point -3",
       [&](fb::Model* m) {
         const auto* b = block(m, "pre");
         return b != nullptr && SetScalar<int32_t>(b->add1()->a(), fb::ActQuant::VT_ZERO_POINT, -3);
       },
       "add1 is int16 (the residual stream) with zero point -3, must be 0"},
      {"pre: add2's output scale 0",
       [&](fb::Model* m) {
         const auto* b = block(m, "pre");
         return b != nullptr && SetScalar<float>(b->add2()->output(), fb::ActQuant::VT_SCALE, 0.0f);
       },
       "add2 must be finite and > 0"},
      {"pre: add1 shift 14 (contract 5c: n <= 13)",
       [&](fb::Model* m) {
         const auto* b = block(m, "pre");
         return b != nullptr && SetScalar<int32_t>(b->add1(), fb::ResidualAdd::VT_SHIFT, 14);
       },
       "residual add add1 (int16 stream): multiplier"},
      {"pre: add2 multiplier 2^13 + 1",
       [&](fb::Model* m) {
         const auto* b = block(m, "pre");
         return b != nullptr && SetScalar<int32_t>(b->add2(), fb::ResidualAdd::VT_A_MULTIPLIER, 8193);
       },
       "multiplier 8193 or shift"},
      {"post: norm2's int16 output with zero point 1",
       [&](fb::Model* m) {
         const auto* b = block(m, "post");
         return b != nullptr && SetScalar<int32_t>(b->norm2()->output16(), fb::ActQuant::VT_ZERO_POINT, 1);
       },
       "norm2 is int16 (the residual stream) with zero point 1, must be 0"},
      {"post: the int16 input (add1's residual) with a NaN scale",
       [&](fb::Model* m) {
         const auto* b = block(m, "post");
         return b != nullptr &&
                SetScalar<float>(b->add1()->a(), fb::ActQuant::VT_SCALE, std::numeric_limits<float>::quiet_NaN());
       },
       "the block's int16 input must be finite and > 0"},
      {"pre: the flag says int8, the LayerNorms read int16",
       [&](fb::Model* m) {
         const auto* b = block(m, "pre");
         return b != nullptr && SetScalar<uint8_t>(b, fb::EncoderBlock::VT_RESIDUAL16, 0);
       },
       "LayerNorms on an int16 stream in a block whose residual stream is int8"},
  };
  ExpectFieldsRefused(name, cases);
}

// The stream's ends (issue 37, transformer_generate_int8: its positions layer
// 'src_pos' writes the first block's int16 input from the embedding's int8
// rows, positions16 contract; digits_vit's reads int16, Int16EntryFields): the
// int16 output must be symmetric, its shift in 1..16 with the table's
// fraction bits within 13 of it, an int8 output carries no shift, and a
// positions layer that writes int8 cannot feed a block reading int16.
TEST(BadModel, Positions16Fields) {
  const std::string name = "transformer_generate_int8";
  if (!Converted(name)) GTEST_SKIP() << "models/transformer not converted in this build";
  const auto tok = [](fb::Model* m) -> const fb::Positions* {
    const int i = FindLayer(m, fb::LayerOptions::Positions);
    return i < 0 ? nullptr : m->layers()->Get(static_cast<uint32_t>(i))->options_as_Positions();
  };
  {  // the file as converted: int16 out, loads
    AlignedBuffer b = ReadModel(name);
    const fb::Positions* p = tok(flatbuffers::GetMutableRoot<fb::Model>(b.data()));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->output16());
    std::string msg;
    EXPECT_EQ(LoadStatus(b.data(), b.size(), &msg), Status::kOk) << msg;
  }
  const FieldCase cases[] = {
      {"src_pos: int16 output with zero point 3",
       [&](fb::Model* m) { return SetScalar<int32_t>(tok(m)->output(), fb::ActQuant::VT_ZERO_POINT, 3); },
       "layer 'src_pos': output is int16 (the residual stream) with zero point 3, must be 0"},
      {"src_pos: shift 17",
       [&](fb::Model* m) { return SetScalar<int32_t>(tok(m), fb::Positions::VT_SHIFT, 17); },
       "layer 'src_pos': int16 output 1 shift 17 fraction bits"},
      {"src_pos: shift 0",
       [&](fb::Model* m) { return SetScalar<int32_t>(tok(m), fb::Positions::VT_SHIFT, 0); },
       "layer 'src_pos': int16 output 1 shift 0 fraction bits"},
      {"src_pos: the table's fraction bits above the shift, or more than 13 below it",
       [&](fb::Model* m) {
         const fb::Positions* p = tok(m);  // b > 1: shift 1 < b; else shift 16 > b + 13
         return p != nullptr && SetScalar<int32_t>(p, fb::Positions::VT_SHIFT, p->pos_bits() > 1 ? 1 : 16);
       },
       "fraction bits"},
      {"src_pos: int8 output flag with the int16 shift",
       [&](fb::Model* m) { return SetScalar<uint8_t>(tok(m), fb::Positions::VT_OUTPUT16, 0); },
       "layer 'src_pos': int16 output 0 shift"},
  };
  ExpectFieldsRefused(name, cases);
}

// An mha layer's int16 output (issue 37, contract 5c-out,
// transformer_int8_out16: every layer has MultiHeadAttention.output16): an
// int8 (S8) layer only, its out_proj output int16 with zero point 0.
TEST(BadModel, MhaOutput16Fields) {
  const std::string name = "transformer_int8_out16";
  if (!Converted(name)) GTEST_SKIP() << "models/transformer not converted in this build";
  const FieldCase cases[] = {
      {"output16 on a float layer",
       [](fb::Model* m) {
         const int i = FindLayer(m, fb::LayerOptions::MultiHeadAttention);
         return i >= 0 && SetScalar<int8_t>(m->layers()->Get(static_cast<uint32_t>(i)), fb::Layer::VT_DTYPE,
                                            static_cast<int8_t>(fb::DType::F32));
       },
       "output16 (an int16 output) is set on a float (F32) layer"},
      {"output16 with out_proj's output zero point 3",
       [](fb::Model* m) {
         const auto* a = FirstMha(m);
         return a != nullptr && a->output16() &&
                SetScalar<int32_t>(a->out_proj()->output(), fb::ActQuant::VT_ZERO_POINT, 3);
       },
       "output16's output (out_proj) is int16 (the residual stream) with zero point 3, must be 0"},
  };
  ExpectFieldsRefused(name, cases);
}

namespace {

// The stream's 16-bit entry (issue 37, digits_vit_int8_res16: the patch
// projection 'embed' writes int16 rows, Linear.output16 as contract 5c-out,
// and the positions layer 'tok' reads them, Positions.input16): output16 only
// on a linear layer's own table (a block's projection pointed at embed's is
// refused, not ignored), input16 only on int8 layers that write int16, its
// shift in 1..30, both ends symmetric, and the graph refuses an int8 step
// feeding tok's int16 input, naming the step.
TEST(BadModel, Int16EntryFields) {
  const std::string name = "digits_vit_int8_res16";
  if (!Converted(name)) GTEST_SKIP() << "models/digits_vit not converted in this build";
  const auto layer = [](fb::Model* m, fb::LayerOptions kind) -> const fb::Layer* {
    const int i = FindLayer(m, kind);
    return i < 0 ? nullptr : m->layers()->Get(static_cast<uint32_t>(i));
  };
  const auto embed = [&](fb::Model* m) { return layer(m, fb::LayerOptions::Linear)->options_as_Linear(); };
  const auto tok = [&](fb::Model* m) { return layer(m, fb::LayerOptions::Positions)->options_as_Positions(); };
  const auto block = [&](fb::Model* m) { return layer(m, fb::LayerOptions::EncoderBlock)->options_as_EncoderBlock(); };
  {  // the file as converted: embed writes int16, tok reads it; loads
    AlignedBuffer b = ReadModel(name);
    fb::Model* m = flatbuffers::GetMutableRoot<fb::Model>(b.data());
    ASSERT_EQ(FindLayer(m, fb::LayerOptions::Linear), 0);
    EXPECT_TRUE(embed(m)->output16());
    EXPECT_TRUE(tok(m)->input16());
    EXPECT_TRUE(tok(m)->output16());
    std::string msg;
    EXPECT_EQ(LoadStatus(b.data(), b.size(), &msg), Status::kOk) << msg;
  }
  const FieldCase cases[] = {
      {"block0: its attention's q_proj is embed's table (output16)",
       [&](fb::Model* m) {
         return Redirect(block(m)->self_attn(), fb::MultiHeadAttention::VT_Q_PROJ, embed(m));
       },
       "q_proj has output16 (an int16 output): only a linear layer's projection writes int16"},
      {"block0: its FFN's fc1 is embed's table (output16)",
       [&](fb::Model* m) { return Redirect(block(m)->ffn(), fb::FeedForward::VT_FC1, embed(m)); },
       "fc1 has output16 (an int16 output): only a linear layer's projection writes int16"},
      {"tok: input16 in a float layer",
       [&](fb::Model* m) {
         return SetScalar<int8_t>(layer(m, fb::LayerOptions::Positions), fb::Layer::VT_DTYPE,
                                  static_cast<int8_t>(fb::DType::F32));
       },
       "layer 'tok': input16 (int16 input rows) in a float (F32) layer"},
      {"embed: output16 in a float layer",
       [&](fb::Model* m) {
         return SetScalar<int8_t>(layer(m, fb::LayerOptions::Linear), fb::Layer::VT_DTYPE,
                                  static_cast<int8_t>(fb::DType::F32));
       },
       "layer 'embed': linear has output16 (an int16 output) in a float (F32) layer"},
      {"tok: input16 without output16",
       [&](fb::Model* m) { return SetScalar<uint8_t>(tok(m), fb::Positions::VT_OUTPUT16, 0); },
       "layer 'tok': input16 (int16 input rows) without output16"},
      {"tok: shift 31",
       [&](fb::Model* m) { return SetScalar<int32_t>(tok(m), fb::Positions::VT_SHIFT, 31); },
       "layer 'tok': int16 input shift 31 fraction bits"},
      {"tok: fraction bits above the shift",
       [&](fb::Model* m) { return SetScalar<int32_t>(tok(m), fb::Positions::VT_POS_BITS, tok(m)->shift() + 1); },
       "bits 0..shift"},
      {"tok: int16 input with zero point 7",
       [&](fb::Model* m) { return SetScalar<int32_t>(tok(m)->input(), fb::ActQuant::VT_ZERO_POINT, 7); },
       "layer 'tok': input16's input is int16 (the residual stream) with zero point 7, must be 0"},
      {"embed: int16 output with zero point -2",
       [&](fb::Model* m) { return SetScalar<int32_t>(embed(m)->output(), fb::ActQuant::VT_ZERO_POINT, -2); },
       "layer 'embed': output16's output is int16 (the residual stream) with zero point -2, must be 0"},
      {"embed writes int8, tok reads int16",
       [&](fb::Model* m) {  // (and no zero row in its plan)
         return SetScalar<uint8_t>(embed(m), fb::Linear::VT_OUTPUT16, 0) &&
                SetScalar<uint64_t>(layer(m, fb::LayerOptions::Linear), fb::Layer::VT_ARENA_BYTES, 0);
       },
       "graph step 1 (layer 'tok'): its query takes int16 elements, step 0 gives int8"},
  };
  ExpectFieldsRefused(name, cases);
}

}  // namespace
