// Device: parsed once from its text, printed back the same way, one error text for bad ones.
#include "gpufeed/base/device.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed {
namespace {

TEST(Device, ParsesEveryKindAndPrintsItBack) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_TRUE(Device::parse("cpu").is_cpu());
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  EXPECT_TRUE(Device::parse("cuda:0").is_cuda());
  EXPECT_EQ(Device::parse("cuda").index, -1);  // LOCAL_RANK's, when it is resolved
  EXPECT_EQ(Device::parse("auto").kind, Device::Kind::automatic);
  EXPECT_FALSE(Device::parse("auto").is_cuda());
  for (const char* text : {"cpu", "cuda", "cuda:0", "cuda:12", "auto"}) {
    EXPECT_EQ(Device::parse(text).str(), text);
    std::ostringstream out;
    out << Device::parse(text);
    EXPECT_EQ(out.str(), text);
  }
  EXPECT_NE(Device::cuda(0), Device::cuda(1));
  EXPECT_NE(Device::cuda(0), Device::cpu());
}

TEST(Device, AssigningTextParsesIt) {
  Device d = "cuda:2";
  EXPECT_EQ(d, Device::cuda(2));
  d = std::string("cpu");
  EXPECT_TRUE(d.is_cpu());
  EXPECT_EQ(Device{}, Device::cpu());  // the default
}

TEST(Device, BadTextIsAnOptionErrorOnTheDeviceField) {
  for (const char* text : {"tpu", "", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cuda:1234",
                           "cuda 0", "gpu:0"}) {
    try {
      (void)Device::parse(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const OptionError& e) {
      EXPECT_EQ(e.field(), "device");
      EXPECT_NE(std::string(e.what()).find(std::string("device=") + text + ":"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace gpufeed
