import os
import sys

import matplotlib

matplotlib.use("Agg")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # problems/ is a folder of scripts next to the package
    sys.path.insert(0, ROOT)
