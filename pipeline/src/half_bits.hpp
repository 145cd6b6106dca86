#pragma once
// IEEE binary16 and bfloat16 conversions on the host, by bit manipulation, rounding to nearest
// with ties to even. Infinities stay infinite, NaNs stay NaN (quieted), subnormals are exact.
// The double overloads round once: the double is first rounded to float with round-to-odd,
// which leaves enough guard bits for the second rounding to give the correctly rounded result.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpufeed::pipeline {

namespace half_detail {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(std::uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Rounds `remainder`'s dropped bits of `kept` to nearest even: `half` is the tie value.
inline std::uint32_t round_even(std::uint32_t kept, std::uint32_t remainder, std::uint32_t half) {
  return (remainder > half || (remainder == half && (kept & 1u) != 0)) ? kept + 1 : kept;
}

/// `d` rounded to float with round-to-odd (the odd neighbour whenever `d` is inexact).
inline float round_to_odd_float(double d) {
  if (std::fabs(d) > static_cast<double>(FLT_MAX) && !std::isinf(d)) {
    return d > 0 ? FLT_MAX : -FLT_MAX;  // odd, so the second rounding still overflows
  }
  const float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d || (float_bits(f) & 1u) != 0) return f;
  return std::nextafter(f, d > static_cast<double>(f) ? INFINITY : -INFINITY);
}

}  // namespace half_detail

/// binary16 bits of `f`, round to nearest even.
inline std::uint16_t float_to_half_bits(float f) {
  using half_detail::round_even;
  const std::uint32_t x = half_detail::float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) {  // NaN: quiet it, keep the top payload bits
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
  }
  if (ax >= 0x477FF000u) {  // >= 65520 (halfway between 65504 and 2^16) and infinity
    return static_cast<std::uint16_t>(sign | 0x7C00u);
  }
  if (ax < 0x38800000u) {     // below 2^-14: a subnormal half or zero
    if (ax <= 0x33000000u) {  // at most 2^-25: ties to the even zero
      return static_cast<std::uint16_t>(sign);
    }
    const std::uint32_t exponent = ax >> 23;                      // 102..112
    const std::uint32_t mantissa = (ax & 0x7FFFFFu) | 0x800000u;  // with the implicit bit
    const std::uint32_t shift = 126 - exponent;                   // units of 2^-24
    const std::uint32_t kept = mantissa >> shift;
    const std::uint32_t rem = mantissa & ((1u << shift) - 1);
    return static_cast<std::uint16_t>(sign | round_even(kept, rem, 1u << (shift - 1)));
  }
  const std::uint32_t rebiased = ax - (112u << 23);  // exponent bias 127 -> 15
  const std::uint32_t rounded = round_even(rebiased >> 13, rebiased & 0x1FFFu, 0x1000u);
  return static_cast<std::uint16_t>(sign | rounded);  // a carry moves into the exponent
}

/// bfloat16 bits of `f`, round to nearest even.
inline std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t x = half_detail::float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);  // overflow carries to infinity
  return static_cast<std::uint16_t>(rounded >> 16);
}

/// The float value of binary16 bits (exact).
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (std::uint32_t{h} & 0x8000u) << 16;
  std::uint32_t exponent = (std::uint32_t{h} >> 10) & 0x1Fu;
  std::uint32_t mantissa = std::uint32_t{h} & 0x3FFu;
  if (exponent == 0x1F) {  // infinity, or NaN (quieted)
    const std::uint32_t quiet = mantissa != 0 ? 0x400000u : 0u;
    return half_detail::bits_float(sign | 0x7F800000u | quiet | (mantissa << 13));
  }
  if (exponent == 0) {
    if (mantissa == 0) return half_detail::bits_float(sign);
    exponent = 113;  // normalize the subnormal: value = mantissa * 2^-24
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    return half_detail::bits_float(sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13));
  }
  return half_detail::bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// The float value of bfloat16 bits (exact).
inline float bf16_bits_to_float(std::uint16_t b) {
  return half_detail::bits_float(std::uint32_t{b} << 16);
}

/// binary16 bits of `d`, rounded once to nearest even.
inline std::uint16_t double_to_half_bits(double d) {
  return float_to_half_bits(half_detail::round_to_odd_float(d));
}

/// bfloat16 bits of `d`, rounded once to nearest even.
inline std::uint16_t double_to_bf16_bits(double d) {
  return float_to_bf16_bits(half_detail::round_to_odd_float(d));
}

}  // namespace gpufeed::pipeline
