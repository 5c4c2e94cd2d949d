#!/usr/bin/env python3
"""The fuzzer's own parts: miniyaml reads every shipped input and model file and writes it back
unchanged in meaning (a second round trip is the identity), quoting keeps any text exactly, the
case list depends only on the seed, and every class is drawn."""
import collections
import os
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "fuzz"))

import fuzz  # noqa: E402
import miniyaml as Y  # noqa: E402


class MiniYaml(unittest.TestCase):
    def test_round_trip_of_every_shipped_file(self):
        files = sorted((ROOT / "inputs").glob("*/*.yaml"))
        self.assertGreater(len(files), 20)
        for path in files:
            tree = Y.parse(path.read_text())
            text = Y.dump(tree)
            self.assertEqual(Y.dump(Y.parse(text)), text, path.name)

    def test_values_survive(self):
        tree = Y.parse((ROOT / "inputs" / "ode" / "wb_net.model.yaml").read_text())
        self.assertEqual(Y.get(tree, "modules.wb.states.V").__class__, Y.Map)
        self.assertEqual(Y.get(tree, "connections")[0][3][1].text,
                         "g_syn/n_pre*pre.s*(post.V - E_syn)")
        self.assertEqual(Y.get(tree, "network")[0][2][1].text, "100")

    def test_quote_keeps_any_text(self):
        for text in ['a"b\\c', "\x00\x1b[31m\x7f\x85", "\udcff\ufeff", "caf\u00e9", "", "-"]:
            self.assertEqual(Y._flow(Y.quote(text)).text, text)

    def test_unsupported_yaml_is_refused(self):
        for text in ["a: |\n  x\n", "a: &x 1\nb: *x\n", "\ta: 1\n"]:
            with self.assertRaises(Y.ParseError):
                Y.parse(text)


class Cases(unittest.TestCase):
    def test_cases_depend_only_on_the_seed(self):
        seeds = fuzz.make_seeds(ROOT)
        a = [fuzz.make_case(i, 68, seeds) for i in range(48)]
        b = [fuzz.make_case(i, 68, seeds) for i in range(48)]
        self.assertEqual([(c.desc, c.files) for c in a], [(c.desc, c.files) for c in b])
        c = [fuzz.make_case(i, 69, seeds) for i in range(48)]
        self.assertNotEqual([x.desc for x in a], [x.desc for x in c])
        self.assertEqual(collections.Counter(x.cls for x in a),
                         collections.Counter({k: 4 for k in fuzz.CLASSES}))

    def test_position_rule(self):
        case = fuzz.Case(0, "delete", fuzz.make_seeds(ROOT)[0])
        self.assertTrue(fuzz.positioned("error: a.yaml:3:7: bad\n", case))
        self.assertFalse(fuzz.positioned("error: a.yaml: bad\n", case))
        self.assertFalse(fuzz.positioned("error: a.yaml:0:0: bad\n", case))
        self.assertFalse(fuzz.positioned("nothing said\n", case))
        case.set_args = ["--set", "x=1"]
        self.assertTrue(fuzz.positioned("error: --set x=1: unknown key\n", case))


if __name__ == "__main__":
    unittest.main()
