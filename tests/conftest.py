import os
import signal
import sys

import matplotlib

matplotlib.use("Agg")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # problems/ is a folder of scripts next to the package
    sys.path.insert(0, ROOT)

# The Ctrl-C tests send SIGINT to pytest or to children it starts; a runner that starts pytest with SIGINT ignored
# (nohup, some CI services) would make them fail for that alone, and the children would inherit the ignore.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
