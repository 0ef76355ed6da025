# SPDX-License-Identifier: GPL-2.0
"""sbpnlab: the SBPN experiment runner (scenario files -> runs in the VM).

scenario.py reads and checks scenario files and expands them into runs,
schedule.py turns a link schedule into timed rate changes, netlink.py and
testbed.py build the emulated path, shortflows.py is the short-TCP-flow
tool, run.py executes one run into its result directory, campaign.py runs
many, cli.py is the command line (scripts/sbpn-lab).  Standard library
only: it runs inside the VM with the host's python3.  stats.py, report.py
and plots.py (the analysis) read the result directories.
"""
import os
import sys

# Version of the result directory layout (Documentation/results-format.rst).
RESULTS_FORMAT = 1

# The record reader (standard library only) is shared with the userspace
# tests, one reader per format: modules of the package "import records".
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "userspace", "tests"))
