// SPDX-License-Identifier: MIT
// Error statistics and the train/test split of `flopcast validate` (label: unit).
#include "flopcast/stats.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopcast/error.hpp"

namespace flopcast {
namespace {

TEST(ErrorStats, HandComputedOddCount) {
  const std::vector<double> measured{100, 200, 50, 400, 10};
  const std::vector<double> predicted{110, 180, 50, 500, 13};
  // signed errors (pred − meas) / meas: +0.10, −0.10, 0, +0.25, +0.30
  // APE: 0.10, 0.10, 0, 0.25, 0.30; sorted 0, 0.10, 0.10, 0.25, 0.30
  const ErrorStats s = error_stats(predicted, measured);
  EXPECT_EQ(s.count, 5u);
  EXPECT_NEAR(s.mape, 0.15, 1e-12);        // (0.10 + 0.10 + 0 + 0.25 + 0.30) / 5 = 0.75 / 5
  EXPECT_NEAR(s.bias, 0.11, 1e-12);        // (0.10 − 0.10 + 0 + 0.25 + 0.30) / 5 = 0.55 / 5
  EXPECT_NEAR(s.median_ape, 0.10, 1e-12);  // position 0.5 · 4 = 2 → sorted[2] = 0.10
  EXPECT_NEAR(s.p90_ape, 0.28, 1e-12);  // position 0.9 · 4 = 3.6 → 0.25 + 0.6 · (0.30 − 0.25)
  EXPECT_NEAR(s.max_ape, 0.30, 1e-12);
  EXPECT_EQ(s.max_index, 4u);
}

TEST(ErrorStats, LinearInterpolationEvenCount) {
  const std::vector<double> measured{1, 1, 1, 1};
  const std::vector<double> predicted{0.6, 1.3, 1.1, 1.2};
  // APE 0.4, 0.3, 0.1, 0.2 → sorted 0.1, 0.2, 0.3, 0.4; signed −0.4, +0.3, +0.1, +0.2
  const ErrorStats s = error_stats(predicted, measured);
  EXPECT_NEAR(s.mape, 0.25, 1e-12);        // 1.0 / 4
  EXPECT_NEAR(s.bias, 0.05, 1e-12);        // 0.2 / 4
  EXPECT_NEAR(s.median_ape, 0.25, 1e-12);  // position 1.5 → (0.2 + 0.3) / 2
  EXPECT_NEAR(s.p90_ape, 0.37, 1e-12);     // position 2.7 → 0.3 + 0.7 · 0.1
  EXPECT_NEAR(s.max_ape, 0.4, 1e-12);
  EXPECT_EQ(s.max_index, 0u);
}

TEST(ErrorStats, SingleAndEmpty) {
  const ErrorStats one = error_stats({90}, {100});  // −10 %
  EXPECT_EQ(one.count, 1u);
  EXPECT_NEAR(one.mape, 0.1, 1e-12);
  EXPECT_NEAR(one.median_ape, 0.1, 1e-12);
  EXPECT_NEAR(one.p90_ape, 0.1, 1e-12);
  EXPECT_NEAR(one.bias, -0.1, 1e-12);
  const ErrorStats none = error_stats({}, {});
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.mape, 0.0);
}

TEST(ErrorStats, RejectsBadInput) {
  EXPECT_THROW(error_stats({1, 2}, {1}), SpecError);
  EXPECT_THROW(error_stats({1}, {0}), SpecError);
  EXPECT_THROW(error_stats({1}, {-3}), SpecError);
}

TEST(Split, Fnv1aKnownValues) {
  // Reference values of 64-bit FNV-1a (Fowler/Noll/Vo test vectors).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(Split, DeterministicAndAbout70_30) {
  int train = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = "aic_gemm.csv H100-SXM bf16 m=" + std::to_string(i) + " n=4096 k=4096";
    const Split s = split_of(id);
    EXPECT_EQ(s, split_of(id));
    train += s == Split::train;
  }
  // Binomial(10000, 0.7): sd = sqrt(10000 · 0.7 · 0.3) = 45.8; allow ±4 sd.
  EXPECT_GT(train, 7000 - 184);
  EXPECT_LT(train, 7000 + 184);
  // train iff hash % 100 < 70: 0xaf63dc4c8601ec8c = 12638187200555641996, % 100 = 96 → test;
  // 0x85944171f73967e8 = 9625390261332436968, % 100 = 68 → train.
  EXPECT_EQ(split_of("a"), Split::test);
  EXPECT_EQ(split_of("foobar"), Split::train);
  EXPECT_EQ(to_string(Split::train), "train");
  EXPECT_EQ(to_string(Split::test), "test");
}

}  // namespace
}  // namespace flopcast
