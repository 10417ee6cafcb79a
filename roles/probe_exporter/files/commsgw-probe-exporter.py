# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw-probe-exporter: the commsgw.routing live probe per Prometheus scrape (docs/monitoring.md).

Installed on the SBC host by the commsgw.routing.probe_exporter role and run as
``python3 -I -B <this file> serve --config ...``: its libraries (exporter/*, the probe and what they import)
lie next to it under the collection's own layout, ansible_collections/commsgw/routing/plugins/module_utils,
so this directory goes first on sys.path (-I keeps PYTHONPATH and the user's site out).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ansible_collections.commsgw.routing.plugins.module_utils.exporter.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
