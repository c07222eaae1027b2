// The PyTorch zip checkpoint reader (converter/io/torch_zip.h) and its
// restricted unpickler (torch_pickle.h): hand-assembled pickles and archives,
// so every expectation below is written out, not produced by the code under
// test. The checkpoint torch.save itself wrote is checked end to end by the
// CLI cases (tests/converter/CMakeLists.txt, "torch_zip").
#include <gtest/gtest.h>
#include <zip.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/formats.h"
#include "converter/io/torch_pickle.h"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;

using Bytes = std::vector<uint8_t>;

void Add(Bytes& b, const std::string& s) { b.insert(b.end(), s.begin(), s.end()); }
void Str(Bytes& b, const std::string& s) {  // SHORT_BINUNICODE
  b.push_back(0x8c);
  b.push_back(static_cast<uint8_t>(s.size()));
  Add(b, s);
}

// {name: tensor} where the tensor is a view (offset, size, stride) of a
// float32 storage '0' of `numel` elements, pickled as torch.save does
// (protocol 2: GLOBAL, BINPERSID, REDUCE, SETITEMS).
Bytes StateDictPickle(const std::string& name, int numel, int offset, const std::vector<int>& size,
                      const std::vector<int>& stride) {
  Bytes b = {0x80, 0x02};
  Add(b, "ccollections\nOrderedDict\n)R(");  // OrderedDict(), MARK
  Str(b, name);
  Add(b, "ctorch._utils\n_rebuild_tensor_v2\n(");  // callable, MARK of its arguments
  b.push_back('(');                                 // MARK of the persistent id
  Str(b, "storage");
  Add(b, "ctorch\nFloatStorage\n");
  Str(b, "0");
  Str(b, "cpu");
  b.push_back('K');
  b.push_back(static_cast<uint8_t>(numel));
  Add(b, "tQ");  // TUPLE, BINPERSID
  b.push_back('K');
  b.push_back(static_cast<uint8_t>(offset));
  for (const std::vector<int>* dims : {&size, &stride}) {
    b.push_back('(');
    for (int d : *dims) {
      b.push_back('K');
      b.push_back(static_cast<uint8_t>(d));
    }
    b.push_back('t');
  }
  b.push_back(0x89);  // requires_grad False
  Add(b, "ccollections\nOrderedDict\n)R");  // backward hooks
  Add(b, "tRu.");  // args TUPLE, REDUCE, SETITEMS, STOP
  return b;
}

std::string WriteArchive(const std::string& file, const Bytes& pkl, const std::vector<float>& storage) {
  const std::string path = fixtures::temp_dir("torch") + "/" + file;
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr);
  const std::string order = "little";
  zip_file_add(z, "archive/data.pkl", zip_source_buffer(z, pkl.data(), pkl.size(), 0), 0);
  zip_file_add(z, "archive/byteorder", zip_source_buffer(z, order.data(), order.size(), 0), 0);
  zip_file_add(z, "archive/data/0",
               zip_source_buffer(z, storage.data(), storage.size() * sizeof(float), 0), 0);
  EXPECT_EQ(zip_close(z), 0);
  return path;
}

std::string Error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

TEST(TorchZip, StridedViewOfASharedStorage) {
  // storage 0..5; view at offset 1, size (2, 2), stride (1, 2): the transpose
  // of [[1, 2], [3, 4]] -> [[1, 3], [2, 4]].
  const std::string path = WriteArchive("view.pt", StateDictPickle("w", 6, 1, {2, 2}, {1, 2}),
                                        {0, 1, 2, 3, 4, 5});
  const ArrayMap m = load_weights(path);
  ASSERT_EQ(m.count("w"), 1u);
  const Array& a = m.at("w");
  EXPECT_EQ(a.shape, (std::vector<size_t>{2, 2}));
  EXPECT_EQ(a.data, (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(a.dtype, "float32");
}

TEST(TorchZip, ViewPastItsStorageIsRefused) {
  // size (2, 3), stride (1, 2), offset 1: the last element is 1 + 1 + 4 = 6.
  const std::string path = WriteArchive("past.pt", StateDictPickle("w", 6, 1, {2, 3}, {1, 2}),
                                        {0, 1, 2, 3, 4, 5});
  const std::string e = Error([&] { load_weights(path); });
  EXPECT_NE(e.find("past.pt: tensor 'w': view"), std::string::npos) << e;
  EXPECT_NE(e.find("reaches element 6 of a storage of 6"), std::string::npos) << e;
}

TEST(TorchZip, StorageShorterThanDeclaredIsRefused) {
  const std::string path = WriteArchive("short.pt", StateDictPickle("w", 6, 0, {6}, {1}), {0, 1, 2});
  const std::string e = Error([&] { load_weights(path); });
  EXPECT_NE(e.find("short.pt: tensor 'w'"), std::string::npos) << e;
}

TEST(TorchPickle, RefusesGlobalsOutsideTheAllowList) {
  // pickle.dumps of an object whose __reduce__ is (os.system, ('echo pwned',)).
  Bytes p = {0x80, 0x02};
  Add(p, "cposix\nsystem\n");
  const Bytes rest = {'q', 0, 'X', 10, 0, 0, 0};
  p.insert(p.end(), rest.begin(), rest.end());
  Add(p, "echo pwned");
  const Bytes tail = {'q', 1, 0x85, 'q', 2, 'R', 'q', 3, '.'};
  p.insert(p.end(), tail.begin(), tail.end());
  const std::string e = Error([&] { parse_torch_state_dict(p.data(), p.size(), "evil.pkl"); });
  EXPECT_NE(e.find("evil.pkl: byte 2: refuses global 'posix.system'"), std::string::npos) << e;
}

TEST(TorchPickle, RefusesOpcodesAStateDictDoesNotNeed) {
  // pickle.dumps({'a': set()}, protocol=4) without its frame: EMPTY_SET (0x8f).
  const Bytes p = {0x80, 0x04, '}', 0x94, 0x8c, 1, 'a', 0x94, 0x8f, 0x94, 's', '.'};
  const std::string e = Error([&] { parse_torch_state_dict(p.data(), p.size(), "f.pkl"); });
  EXPECT_NE(e.find("f.pkl: byte 8: unsupported pickle opcode 0x8f"), std::string::npos) << e;
}

// A training checkpoint, as Torch-KWT's save_model writes it:
// {"epoch": 3, "val_acc": 0.5, "model_state_dict": {"w": tensor},
//  "optimizer_state_dict": {"state": {0: {"exp_avg": tensor}}, "param_groups": [{"lr": 0.001, "params": [0]}]}}
// Its tensors by their dotted paths; the numbers hold no tensor.
TEST(TorchPickle, ATrainingCheckpointGivesItsTensorsByPath) {
  const Bytes sd = StateDictPickle("w", 6, 0, {6}, {1});
  // After PROTO and "ccollections\nOrderedDict\n)R(" (2 + 28 bytes): "w" and its tensor, up to "u." (2 bytes).
  const Bytes name_and_tensor(sd.begin() + 30, sd.end() - 2);
  Bytes p = {0x80, 0x02, '}', '('};
  Str(p, "epoch");
  p.push_back('K');
  p.push_back(3);
  Str(p, "val_acc");
  const Bytes half = {'G', 0x3f, 0xe0, 0, 0, 0, 0, 0, 0};
  p.insert(p.end(), half.begin(), half.end());
  Str(p, "model_state_dict");
  Add(p, "ccollections\nOrderedDict\n)R(");
  p.insert(p.end(), name_and_tensor.begin(), name_and_tensor.end());
  p.push_back('u');  // SETITEMS: the model's state dict done
  Str(p, "optimizer_state_dict");
  Add(p, "}(");
  Str(p, "state");
  Add(p, "}(K");
  p.push_back(0);
  Add(p, "}(");
  Str(p, "exp_avg");
  p.insert(p.end(), name_and_tensor.begin() + 3, name_and_tensor.end());  // the tensor without "w"
  Add(p, "uu");
  Str(p, "param_groups");
  Add(p, "]}(");
  Str(p, "lr");
  const Bytes lr = {'G', 0x3f, 0x50, 0x62, 0x4d, 0xd2, 0xf1, 0xa9, 0xfc};
  p.insert(p.end(), lr.begin(), lr.end());
  Str(p, "params");
  Add(p, "](K");
  p.push_back(0);
  Add(p, "eua");
  Add(p, "uu.");
  const auto m = parse_torch_state_dict(p.data(), p.size(), "ckpt.pkl");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.count("model_state_dict.w"), 1u);
  EXPECT_EQ(m.count("optimizer_state_dict.state.0.exp_avg"), 1u);
}

// A dict that holds itself as a value: refused with its path, not recursed forever.
TEST(TorchPickle, ADictInsideItselfIsRefused) {
  const Bytes p = {0x80, 0x02, '}', 'q', 0, 0x8c, 1, 'a', 'h', 0, 's', '.'};
  const std::string e = Error([&] { parse_torch_state_dict(p.data(), p.size(), "loop.pkl"); });
  EXPECT_NE(e.find("loop.pkl: byte 11: containers nested deeper than 32 at 'a.a.a."), std::string::npos) << e;
}

TEST(TorchPickle, TruncatedAndNonDictPicklesAreRefused) {
  const Bytes full = StateDictPickle("w", 6, 0, {6}, {1});
  for (size_t cut : {size_t{1}, size_t{10}, full.size() / 2, full.size() - 1}) {
    const std::string e = Error([&] { parse_torch_state_dict(full.data(), cut, "cut.pkl"); });
    EXPECT_NE(e.find("cut.pkl: byte"), std::string::npos) << cut << ": " << e;
  }
  const Bytes five = {0x80, 0x02, 'K', 5, '.'};
  const std::string e = Error([&] { parse_torch_state_dict(five.data(), five.size(), "int.pkl"); });
  EXPECT_NE(e.find("holds a int, not a state dict"), std::string::npos) << e;
}

// A dict that holds itself through the memo (EMPTY_DICT, BINPUT 0, BINGET 0
// twice, SETITEM): refused as a state dict, and freed. The unpickler's values
// are shared_ptrs, so such a cycle leaked until it emptied every container
// on exit (fuzz_torch_pickle's first finding; the sanitize stage runs this
// test under LeakSanitizer).
TEST(TorchPickle, SelfContainingDictIsRefusedAndFreed) {
  const Bytes p = {0x80, 0x02, '}', 'q', 0, 'h', 0, 'h', 0, 's', '.'};
  const std::string e = Error([&] { parse_torch_state_dict(p.data(), p.size(), "cycle.pkl"); });
  EXPECT_NE(e.find("a state dict key is a dict"), std::string::npos) << e;
}

}  // namespace
