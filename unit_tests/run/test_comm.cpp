// The communicator of a process that mpirun did not start: one rank whose collectives leave the
// data as it is (the distributed paths are run by ctest -L mpi, unit_tests/mpi/).
#include "parallel/comm.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hayate::core {
namespace {

TEST(CommOneRank, CollectivesKeepTheData) {
  const Comm& world = Comm::world();
  ASSERT_EQ(world.size(), 1);
  EXPECT_TRUE(world.root());
  EXPECT_FALSE(world.distributed());
  std::int64_t sums[2] = {3, -4};
  world.sum(sums, 2);
  EXPECT_EQ(sums[0], 3);
  EXPECT_EQ(sums[1], -4);
  EXPECT_EQ(world.min(std::int64_t(7)), 7);
  EXPECT_EQ(world.max(2.5), 2.5);
  const std::vector<double> mine{1.0, 2.0, 3.0};
  std::vector<double> all(3), back(3);
  world.gather(mine.data(), 3 * sizeof(double), all.data(), {3 * sizeof(double)});
  EXPECT_EQ(all, mine);
  world.all_gather(mine.data(), 3 * sizeof(double), back.data(), {3 * sizeof(double)});
  EXPECT_EQ(back, mine);
  std::vector<double> got(3);
  world.exchange(mine.data(), 3 * sizeof(double), 0, got.data(), 3 * sizeof(double), 0, 1);
  EXPECT_EQ(got, mine);
  EXPECT_NE(world.describe().find("MPI: "), std::string::npos);
}

// The registered problems (test_main registers them) that split their work over ranks.
TEST(CommOneRank, ProblemsDeclareWhetherTheyRunDistributed) {
  for (const char* name : {"fhp", "ode", "gravity", "stream", "md"})
    EXPECT_TRUE(runs_distributed(name)) << name;
  EXPECT_FALSE(runs_distributed("nosuch"));
}

}  // namespace
}  // namespace hayate::core
