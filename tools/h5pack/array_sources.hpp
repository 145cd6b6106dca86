#pragma once
// The binary files CIFAR-10 and MNIST are distributed as, as sources for pack_file().
//
// CIFAR-10 ("binary version"): data_batch_1.bin .. data_batch_5.bin (train) and test_batch.bin
// (test), each a run of 3073-byte records: one label byte, then 1024 red, 1024 green and 1024
// blue bytes of a 32x32 image, rows in order; batches.meta.txt holds the class names.
// MNIST: IDX files, big-endian: images magic 0x00000803, N, rows, columns, then the pixels;
// labels magic 0x00000801, N, then one byte a label. train-* and t10k-* (test).
#include <string>

#include "gpufeed/formats/pack_file.hpp"

namespace gpufeed::tools::h5pack {

/// A folder with data_batch_*.bin or test_batch.bin, or a file ending in .bin.
bool looks_like_cifar10(const std::string& path);
/// A folder with *-idx3-ubyte files, or a file whose name holds idx3-ubyte.
bool looks_like_mnist(const std::string& path);

/// `path`: the folder (split "train": the data batches, "test": test_batch.bin, "auto": train
/// when there are data batches) or one batch file. Images become 32x32x3 NHWC.
formats::PackInput cifar10_input(const std::string& path, const std::string& split);
/// `path`: the folder (split "train": train-*, "test": t10k-*, "auto": train when present) or
/// the images file (the labels file is the same name with labels/idx1 for images/idx3).
formats::PackInput mnist_input(const std::string& path, const std::string& split);

}  // namespace gpufeed::tools::h5pack
