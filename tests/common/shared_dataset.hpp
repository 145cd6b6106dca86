#pragma once
// A test suite whose tests read one dataset file, written once for the whole suite.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "temp_dir.hpp"

namespace gpufeed::testing {

/// The fixture of a suite that shares one dataset: before the suite's first test,
/// `Suite::make_dataset(dir)` writes it into a fresh temporary directory and returns its path
/// (data_); the directory goes, with whatever the tests wrote beside the dataset, after the
/// suite's last test. `Suite` is the fixture deriving from this. A failure while writing fails
/// the suite, whose tests then do not run.
template <class Suite>
class SharedDataset : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    data_ = Suite::make_dataset(*dir_);
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::string data_;
};

}  // namespace gpufeed::testing
