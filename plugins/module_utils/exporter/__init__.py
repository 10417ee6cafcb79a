# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw-probe-exporter: the live probe (``probe.run_probe``) per Prometheus scrape (docs/monitoring.md).

``config`` (the exporter's configuration and the probe settings a scrape may use), ``metrics``
(reports as Prometheus text), ``runner`` (coalescing, rate cap, deadline, history), ``web``
(TLS and basic auth), ``status_page`` (the HTML page at ``/``), ``server`` (the HTTP server) and
``main`` (the command line the role installs).
"""
