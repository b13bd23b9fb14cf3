// The fixture the end-to-end transcription tests share: one micro test model (random f16 weights,
// the real file format) written once per suite, loaded with a chosen thread count.
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "hark/hark.hpp"
#include "model/model_test_util.h"
#include "model/model_writer.h"

namespace hark::testing {

class MicroModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    file_ = new TempFile("e2e-micro");
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = DType::F16;
    write_test_model(o, file_->path());
  }
  static void TearDownTestSuite() {
    delete file_;
    file_ = nullptr;
  }
  static std::unique_ptr<Context> load(int threads = 2) {
    ContextParams cp;
    cp.n_threads = threads;
    return Context::load(file_->path(), cp);
  }
  static inline TempFile* file_ = nullptr;
};

}  // namespace hark::testing
