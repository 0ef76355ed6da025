# SPDX-License-Identifier: GPL-2.0
"""sbpnlab: the SBPN experiment runner (scenario files -> runs in the VM).

scenario.py reads and checks scenario files and expands them into runs,
schedule.py turns a link schedule into timed rate changes, netlink.py and
testbed.py build the emulated path, shortflows.py is the short-TCP-flow
tool, run.py executes one run into its result directory, campaign.py runs
many, cli.py is the command line (scripts/sbpn-lab).  Standard library
only: it runs inside the VM with the host's python3.  campaignrows.py,
stats.py, report.py and plots.py (the analysis) read the result
directories.  records.py is the one reader of the
record files, for the runner, the analysis and the tests.
"""

# Version of the result directory layout (Documentation/results-format.rst).
RESULTS_FORMAT = 1
