// Schema validation: every error class names the right line and column.
#include "config/config.hpp"
#include "run/registry.hpp"

#include <gtest/gtest.h>

#include <string>

using hayate::core::Config;
using hayate::core::ConfigLoader;
using hayate::core::InputError;
using hayate::core::Schema;

namespace {

const Schema& test_schema(const std::string& name) {
  static Schema schema = [] {
    Schema s("demo", "A problem used only by these tests");
    hayate::core::declare_common_keys(s, {"demo"});
    s.section("system", "System");
    s.integer("system.n", "Particle count").at_least(2);
    s.real("system.softening", "Softening length").defaults(0.01).above(0);
    s.choice("system.solver", {"direct", "tree"}, "Force solver").defaults("direct");
    s.boolean("system.verbose", "Chatty").defaults(false);
    s.reals("system.box", "Box lengths").items(3, 3).above(0).optional_key();
    s.string("system.label", "A label").optional_key();
    s.records("obstacles", "Obstacles", [](hayate::core::Section& r) {
       r.choice("type", {"circle", "rectangle"}, "Shape");
       r.real("radius", "Circle radius").above(0).optional_key();
     }).defaults("[]");
    s.section("tuning", "Performance switches");
    s.choice("tuning.kernel", {"auto", "fast", "plain"}, "Kernel").defaults("auto");
    s.moved("system.kernel", "tuning.kernel");
    s.moved("old.kernel", "tuning.kernel");
    s.removed("old.curve", "the Hilbert curve is always used");
    return s;
  }();
  (void)name;
  return schema;
}

ConfigLoader loader() {
  return ConfigLoader({"demo"}, &test_schema);
}

// Loads `text` and returns the error message; fails the test if it loads.
std::string error_of(const std::string& text, const std::vector<std::string>& set = {}) {
  try {
    loader().load_string(text, "in.yaml", set);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an input error for:\n" << text;
  return {};
}

}  // namespace

TEST(Config, ResolvesDefaultsAndValues) {
  const Config c = loader().load_string(
      "problem: demo\nsystem:\n  n: 1e3\n  box: [1, 2.5, 3]\nobstacles:\n  - type: circle\n"
      "    radius: 0.5\n",
      "dir/in.yaml");
  EXPECT_EQ(c.problem(), "demo");
  EXPECT_EQ(c.input_stem(), "in");
  EXPECT_EQ(c.integer("system.n"), 1000);
  EXPECT_DOUBLE_EQ(c.real("system.softening"), 0.01);
  EXPECT_EQ(c.string("system.solver"), "direct");
  EXPECT_FALSE(c.boolean("system.verbose"));
  EXPECT_EQ(c.reals("system.box"), (std::vector<double>{1, 2.5, 3}));
  EXPECT_FALSE(c.has("system.label"));
  EXPECT_EQ(c.string("backend"), "auto");
  EXPECT_EQ(c.integer("checkpoint.every"), 0);
  const auto items = c.records("obstacles");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].string("type"), "circle");
  EXPECT_DOUBLE_EQ(items[0].real("radius"), 0.5);
  EXPECT_EQ(items[0].where("radius").str(), "dir/in.yaml:7:13");
}

TEST(Config, UnknownKeySuggestsNearestName) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: 4\n  softenin: 0.1\n");
  EXPECT_NE(msg.find("in.yaml:4:3: unknown key 'system.softenin'; did you mean "
                     "'system.softening'?"),
            std::string::npos)
      << msg;
}

TEST(Config, UnknownKeyInWrongSectionPointsToRightPath) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: 4\nsolver: tree\n");
  EXPECT_NE(msg.find("in.yaml:4:1: unknown key 'solver'; did you mean 'system.solver'?"),
            std::string::npos)
      << msg;
}

TEST(Config, WrongTypeNamesExpectedForm) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: many\n");
  EXPECT_NE(msg.find("in.yaml:3:6: 'system.n': expected an integer >= 2, got 'many'"),
            std::string::npos)
      << msg;
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 2.5\n").find("in.yaml:3:6"), std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n  verbose: maybe\n").find("in.yaml:4:12"),
            std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem: 5\n").find("in.yaml:2:9: expected a mapping"),
            std::string::npos);
}

TEST(Config, OutOfRange) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: 4\n  softening: 0\n");
  EXPECT_NE(msg.find("in.yaml:4:14: 'system.softening': expected a real number > 0, got '0'"),
            std::string::npos)
      << msg;
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 1\n").find("in.yaml:3:6"), std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n  box: [1, -2, 3]\n")
                .find("in.yaml:4:12: 'system.box[1]'"),
            std::string::npos);
}

TEST(Config, ListLengthChecked) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: 4\n  box: [1, 2]\n");
  EXPECT_NE(
      msg.find("in.yaml:4:8: 'system.box': expected list of reals, each > 0 (3 items), got 2"),
      std::string::npos)
      << msg;
}

TEST(Config, MissingRequiredKey) {
  const std::string msg = error_of("problem: demo\nsystem:\n  softening: 0.5\n");
  EXPECT_NE(
      msg.find("in.yaml:2:1: missing required key 'system.n' (an integer >= 2: Particle count)"),
      std::string::npos)
      << msg;
  EXPECT_NE(error_of("system:\n  n: 4\n").find("in.yaml:1:1: missing required key 'problem'"),
            std::string::npos);
}

TEST(Config, BadChoiceSuggests) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: 4\n  solver: tre\n");
  EXPECT_NE(msg.find("in.yaml:4:11: 'system.solver': expected one of: direct, tree, got 'tre'; "
                     "did you mean 'tree'?"),
            std::string::npos)
      << msg;
  EXPECT_NE(error_of("problem: dmeo\n")
                .find("in.yaml:1:10: 'problem': expected one of: demo, got "
                      "'dmeo'; did you mean 'demo'?"),
            std::string::npos);
}

TEST(Config, MalformedYaml) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: [1, 2\n");
  EXPECT_NE(msg.find("in.yaml:4:1: malformed YAML"), std::string::npos) << msg;
  EXPECT_NE(error_of("- a\n- b\n").find("in.yaml:1:1: expected a mapping"), std::string::npos);
}

TEST(Config, DuplicateKey) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: 4\n  n: 5\n");
  EXPECT_NE(msg.find("in.yaml:4:3: duplicate key 'system.n'"), std::string::npos) << msg;
}

TEST(Config, RecordItemsValidated) {
  const std::string msg =
      error_of("problem: demo\nsystem:\n  n: 4\nobstacles:\n  - type: square\n  - radius: -1\n");
  EXPECT_NE(msg.find("in.yaml:5:11: 'obstacles[0].type': expected one of: circle, rectangle"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("in.yaml:6:5: missing required key 'obstacles[1].type'"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("in.yaml:6:13: 'obstacles[1].radius': expected a real number > 0"),
            std::string::npos)
      << msg;
}

TEST(Config, ReportsEveryErrorInLineOrder) {
  const std::string msg = error_of("problem: demo\nsystem:\n  n: x\n  solver: y\nfoo: 1\n");
  const auto a = msg.find("in.yaml:3:"), b = msg.find("in.yaml:4:"), c = msg.find("in.yaml:5:");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST(Config, OverridesApplyAndValidate) {
  const Config c =
      loader().load_string("problem: demo\nsystem:\n  n: 4\n", "in.yaml",
                           {"system.n=64", "system.solver=tree", "system.box=[1,1,1]"});
  EXPECT_EQ(c.integer("system.n"), 64);
  EXPECT_EQ(c.string("system.solver"), "tree");
  EXPECT_EQ(c.where("system.n").str(), "--set system.n=64");

  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n", {"system.n=abc"})
                .find("--set system.n=abc: 'system.n': expected an integer >= 2, got 'abc'"),
            std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n", {"system.n"})
                .find("--set system.n: expected key.path=value"),
            std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n", {"system.nn=3"})
                .find("--set system.nn=3: unknown key 'system.nn'; did you mean 'system.n'?"),
            std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n", {"system.n.x=3"})
                .find("--set system.n.x=3: 'n' is not a section"),
            std::string::npos);
  EXPECT_NE(error_of("problem: demo\nsystem:\n  n: 4\n", {"system.n=[1"})
                .find("--set system.n=[1: malformed value"),
            std::string::npos);
}

// A section that only an override created has no line in the file: the override is blamed.
TEST(Config, OverrideOfAnUnknownSectionBlamesTheArgument) {
  const std::string e = error_of("problem: demo\nsystem:\n  n: 4\n", {"nosuch.key=1"});
  EXPECT_NE(e.find("--set nosuch.key=1: unknown key 'nosuch'"), std::string::npos) << e;
  EXPECT_EQ(e.find("in.yaml:1:1"), std::string::npos) << e;
}

// Echoed values are cut to ~80 characters with control bytes escaped, in the value and in the
// --set argument the message names.
TEST(Config, EchoedValuesAreTruncatedAndEscaped) {
  const std::string huge = std::string(50000, 'q') + "\x1b";
  std::string e = error_of("problem: demo\nsystem:\n  n: 4\n", {"system.solver=" + huge});
  EXPECT_LT(e.size(), 600u) << e.substr(0, 300);
  EXPECT_NE(e.find("more bytes"), std::string::npos);
  e = error_of("problem: demo\nsystem:\n  n: 4\n  solver: \"a\\u001b[2Jb\"\n");
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  EXPECT_NE(e.find("got 'a\\x1b[2Jb'"), std::string::npos) << e;
  e = error_of("problem: demo\nsystem:\n  n: 4\n" + std::string(3000, 'k') + ": 1\n");
  EXPECT_LT(e.size(), 600u) << e.substr(0, 300);
}

TEST(Config, FailPointsAtKey) {
  const Config c = loader().load_string("problem: demo\nsystem:\n  n: 4\n", "in.yaml");
  try {
    c.fail("system.n", "must be a power of two");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "in.yaml:3:6: 'system.n': must be a power of two");
  }
}

TEST(Config, ResolvedYamlRoundTrips) {
  const Config c =
      loader().load_string("problem: demo\nsystem:\n  n: 4\n  softening: 0.125\n", "in.yaml");
  const Config again = loader().load_string(c.to_yaml(), "run.yaml");
  EXPECT_EQ(again.to_yaml(), c.to_yaml());
  EXPECT_DOUBLE_EQ(again.real("system.softening"), 0.125);
}

TEST(Schema, MarkdownListsEveryKey) {
  const Schema& s = test_schema("demo");
  const std::string inputs = s.markdown(), tuning = s.markdown(Schema::Part::Tuning);
  for (const auto& path : s.all_paths())
    EXPECT_NE((path.rfind("tuning.", 0) == 0 ? tuning : inputs).find("`" + path + "`"),
              std::string::npos)
        << path;
  EXPECT_NE(inputs.find("Each item of `obstacles`"), std::string::npos);
}

TEST(Schema, NearestAndEditDistance) {
  EXPECT_EQ(hayate::core::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(hayate::core::nearest("stpes", {"steps", "seed", "dt"}), "steps");
  EXPECT_EQ(hayate::core::nearest("zzzzzz", {"steps", "seed"}), "");
}

TEST(Schema, EveryRegisteredKeyIsDocumented) {
  auto& registry = hayate::core::Registry::instance();
  ASSERT_FALSE(registry.names().empty());
  for (const auto& name : registry.names()) {
    const auto& schema = registry.schema(name);
    for (const auto& path : schema.all_paths()) {
      const auto* key = schema.find_key(path);
      ASSERT_NE(key, nullptr) << path;
      EXPECT_FALSE(key->doc.empty()) << name << ": " << path << " has no doc";
    }
  }
}

TEST(Config, FormerKeysSayWhereTheyWent) {
  // A key of a section that still exists.
  std::string e = error_of("problem: demo\nsystem:\n  n: 4\n  kernel: fast\n");
  EXPECT_NE(e.find("in.yaml:4:3: 'system.kernel' moved to 'tuning.kernel'"), std::string::npos)
      << e;
  // Keys of a section that no longer exists, each at its own line; an unrelated key there stays
  // unknown.
  e = error_of(
      "problem: demo\nsystem:\n  n: 4\nold:\n  kernel: fast\n  curve: morton\n"
      "  colour: red\n");
  EXPECT_NE(e.find("in.yaml:5:3: 'old.kernel' moved to 'tuning.kernel'"), std::string::npos) << e;
  EXPECT_NE(e.find("in.yaml:6:3: 'old.curve' was removed: the Hilbert curve is always used"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("in.yaml:7:3: unknown key 'old.colour'"), std::string::npos) << e;
  // On the command line too.
  e = error_of("problem: demo\nsystem:\n  n: 4\n", {"system.kernel=plain"});
  EXPECT_NE(e.find("--set system.kernel=plain: 'system.kernel' moved to 'tuning.kernel'"),
            std::string::npos)
      << e;
  // The new place works and defaults to auto.
  const Config c = loader().load_string("problem: demo\nsystem:\n  n: 4\n", "in.yaml");
  EXPECT_EQ(c.string("tuning.kernel"), "auto");
}

TEST(Config, UserReferenceLeavesTuningToItsOwnReference) {
  const Schema& s = test_schema("demo");
  const std::string inputs = s.markdown();
  EXPECT_EQ(inputs.find("`tuning.kernel`"), std::string::npos);
  EXPECT_NE(inputs.find("`system.n`"), std::string::npos);
  const std::string tuning = s.markdown(Schema::Part::Tuning);
  EXPECT_NE(tuning.find("`tuning.kernel`"), std::string::npos);
  EXPECT_EQ(tuning.find("`system.n`"), std::string::npos);
}
