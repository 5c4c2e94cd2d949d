#!/usr/bin/env python3
"""The instruction-count gate notices a deliberate slow-down: one case measured with extra steps
in its region (the --extra-steps switch of hayate_icount, for this test only) must fail the gate
with exit 1 and name the case; without them it passes. usage: test_icount_gate.py BUILD"""
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "icount.py")


def gate(build, *extra):
    return subprocess.run([sys.executable, SCRIPT, "check", build, "--cases", "md_full", *extra],
                          capture_output=True, text=True)


def main(build):
    same = gate(build)
    assert same.returncode == 0, same.stdout + same.stderr
    slow = gate(build, "--extra-steps", "2")  # 12 steps instead of 10: about 20% more work
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "| md_full |" in slow.stdout and "grew" in slow.stdout, slow.stdout
    print("2 passed, 0 failed")


if __name__ == "__main__":
    main(sys.argv[1])
