#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/measure.py's arithmetic: the growth verdict benchmark 4's
linearity target is read from, and the results file it reads."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURE = os.path.join(HERE, "..", "..", "bench", "measure.py")

spec = importlib.util.spec_from_file_location("measure", MEASURE)
measure = importlib.util.module_from_spec(spec)
spec.loader.exec_module(measure)


def line(bench, a_ms, b_ms, noise=0.005):
    """A results line; the difference's 95 % interval is +-noise ms."""
    d = a_ms - b_ms
    return ("bench=%s a='A' b='B' a_median_ms=%.3f b_median_ms=%.3f ratio=1 delta_ms=%.3f "
            "delta_ci_ms=%.3f..%.3f a_iqr_ms=0-0 b_iqr_ms=0-0 runs=10 tool=python target=- "
            "result=info\n" % (bench, a_ms, b_ms, d, d - noise, d + noise))


def results(points, noise=0.005):
    """points: {(backend, n): (ralon_ms, floor_ms, bwrap_ms[, noise_ms])}"""
    out = ["# ralon benchmarks\n", "# run-mount-1 syscalls=185 floor_syscalls=95\n",
           line("check-10", 0.9, 0.4)]
    for (backend, n), p in sorted(points.items()):
        ralon, floor, bwrap = p[:3]
        out.append(line("run-%s-%d-env" % (backend, n), ralon, 1.0))
        out.append(line("run-%s-%d-floor" % (backend, n), ralon, floor,
                        p[3] if len(p) > 3 else noise))
        out.append(line("run-%s-%d-bwrap" % (backend, n), ralon, bwrap))
    return "".join(out)


class Growth(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        self.addCleanup(os.unlink, f.name)
        f.write(text)
        f.close()
        return f.name

    def test_per_path_costs(self):
        rows = measure.read_rows(self.write(results({
            ("mount", 1): (1.450, 1.210, 2.100),
            ("mount", 10): (1.630, 1.300, 3.300),
            ("mount", 1000): (30.630, 22.300, 1700.0),
        })))
        steps = measure.growth(rows)
        self.assertEqual([(s[0], s[1], s[2]) for s in steps], [("mount", 1, 10), ("mount", 10, 1000)])
        backend, n1, n2, ralon, floor, bwrap, own, own_lo, own_hi = steps[0]
        self.assertAlmostEqual(ralon, 20.0, places=3)      # (1.630 - 1.450) ms / 9 paths
        self.assertAlmostEqual(floor, 10.0, places=3)
        self.assertAlmostEqual(bwrap, 133.333, places=2)
        self.assertAlmostEqual(own, 10.0, places=3)
        # Each difference +-5 us: the own share +-10 us over 9 paths.
        self.assertAlmostEqual(own_lo, 10.0 - 10 / 9, places=3)
        self.assertAlmostEqual(own_hi, 10.0 + 10 / 9, places=3)
        self.assertAlmostEqual(steps[1][3], 29.0 / 0.99, places=2)
        self.assertAlmostEqual(steps[1][6], (8.330 - 0.330) / 0.99, places=2)

    def growth_of(self, text):
        """What `measure.py growth` prints for a results file holding text."""
        p = subprocess.run([sys.executable, MEASURE, "growth", self.write(text)],
                           capture_output=True, text=True, check=True)
        return p.stdout

    def run_growth(self, points, noise=0.005):
        return self.growth_of(results(points, noise))

    def test_linear_own_share_passes(self):
        out = self.run_growth({
            ("landlock", 1): (1.40, 1.19, 2.0),
            ("landlock", 10): (1.42, 1.20, 3.2),
            ("landlock", 1000): (3.00, 1.97, 1690.0),
        })
        self.assertIn("at most linear", out)
        self.assertNotIn("FASTER", out)

    def test_quadratic_own_share_fails(self):
        # ralon's own share: 0.2 ms + 10 us per path up to 10, then 100 us
        # per path: it grows faster than the paths do.
        out = self.run_growth({
            ("mount", 1): (1.40, 1.20, 2.0),
            ("mount", 10): (1.49, 1.20, 3.2),
            ("mount", 1000): (100.49, 1.20, 1690.0),
        })
        self.assertIn("GROWS FASTER THAN LINEAR", out)

    def test_noise_is_not_growth(self):
        # 1 -> 10 paths: own share 0.20 -> 0.21 ms, 1.1 us a path, but with
        # +-20 us on each difference it may have been 5.6; 10 -> 1000 at
        # 4 us a path is then within what the first step could have cost.
        out = self.run_growth({
            ("landlock", 1): (1.40, 1.20, 2.0),
            ("landlock", 10): (1.42, 1.21, 3.2),
            ("landlock", 1000): (5.37, 1.20, 1690.0),
        }, noise=0.020)
        self.assertIn("at most linear", out)
        # Beyond it, but not by more than the noise of the second step:
        # neither verdict is earned.
        out = self.run_growth({
            ("landlock", 1): (1.40, 1.20, 2.0, 0.020),
            ("landlock", 10): (1.42, 1.21, 3.2, 0.020),
            ("landlock", 1000): (9.50, 1.20, 1690.0, 1.5),
        })
        self.assertIn("inconclusive", out)
        self.assertNotIn("FASTER", out)

    def test_judged_against_the_most_the_first_step_could_cost(self):
        self.assertEqual(measure.growth_verdict(5.0, 7.2, 7.0), "at most linear")  # 5 * 1.25 + 1
        self.assertEqual(measure.growth_verdict(5.0, 7.3, 7.1), "inconclusive (within the noise)")
        self.assertEqual(measure.growth_verdict(5.0, 9.0, 7.3), "GROWS FASTER THAN LINEAR")
        # A first step measured below zero counts as zero, not as a bound
        # below zero that anything would exceed.
        self.assertEqual(measure.growth_verdict(-3.0, 0.9, 0.5), "at most linear")
        self.assertEqual(measure.growth_verdict(-3.0, 2.0, 1.5), "GROWS FASTER THAN LINEAR")

    def test_kernel_growth_alone_is_not_ralons(self):
        # The whole grows faster (the floor does), ralon's own share not.
        out = self.run_growth({
            ("mount", 1): (1.45, 1.21, 2.1),
            ("mount", 10): (1.65, 1.33, 3.3),
            ("mount", 1000): (30.97, 23.63, 1699.0),
        })
        self.assertIn("mount       10 -> 1000", out)
        self.assertIn("at most linear", out)

    def test_missing_floor_rows_give_no_verdict(self):
        # Without the side-by-side floor rows there is no own share to judge.
        text = "".join(line("run-mount-%d-env" % n, 1.0 + n / 100, 1.0) for n in (1, 10, 1000))
        out = self.growth_of(text)
        self.assertIn("mount       10 -> 1000", out)
        self.assertNotIn("at most linear", out)
        self.assertNotIn("FASTER", out)

    def literals(self, deltas, noise=0.005):
        """deltas: {n: (literals_ms, glob_ms)} for the command `status`."""
        return "".join(line("literals-status-%d" % n, a, b, noise)
                       for n, (a, b) in sorted(deltas.items()))

    def test_literal_patterns_per_pattern_cost(self):
        rows = measure.read_rows(self.write(self.literals({
            100: (2.0, 1.9), 1000: (11.9, 10.9), 10000: (109.9, 99.9)})))
        steps = measure.literal_growth(rows)
        self.assertEqual([(s[0], s[1], s[2]) for s in steps],
                         [("status", 100, 1000), ("status", 1000, 10000)])
        self.assertAlmostEqual(steps[0][5], 1.0, places=3)  # (1.0 - 0.1) ms / 900 patterns
        self.assertAlmostEqual(steps[1][5], 1.0, places=3)  # (10.0 - 1.0) ms / 9000
        self.assertIn("at most linear", self.growth_of(self.literals({
            100: (2.0, 1.9), 1000: (11.9, 10.9), 10000: (109.9, 99.9)})))

    def test_literal_patterns_quadratic_fails(self):
        # The extra cost per pattern ten times larger at the larger step.
        out = self.growth_of(self.literals({100: (2.0, 1.9), 1000: (12.0, 10.9),
                                            10000: (200.0, 99.9)}))
        self.assertIn("GROWS FASTER THAN LINEAR", out)

    def test_no_run_rows(self):
        self.assertIn("no sizes", self.growth_of(line("check-10", 1, 1)))


class Tail(unittest.TestCase):
    """The runs a median hides: those over twice it are counted and shown
    with the mean; none, nothing is added to the line."""

    def test_runs_over_twice_the_median(self):
        times = [0.0026] * 17 + [0.016, 0.019, 0.0053]  # seconds
        median = 2.6
        self.assertEqual(measure.slow_runs(times, median), 3)
        self.assertEqual(measure.tail(times, median),
                         "; mean 4.225, 3 of 20 runs over twice the median")

    def test_no_tail(self):
        times = [0.0026] * 19 + [0.0052]  # exactly twice: not over
        self.assertEqual(measure.slow_runs(times, 2.6), 0)
        self.assertEqual(measure.tail(times, 2.6), "")


if __name__ == "__main__":
    unittest.main()
