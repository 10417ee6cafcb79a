# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's defaults, each written once: the settings validator, the platform options, the RPC client,
the modules and the SRV refresher on the SBC host (shipped: standard library only) all take them from here."""

DEFAULT_CONFIG_DIR = "/etc/kamailio"  # the one default of commsgw_sbc.config_dir and the modules' config_dir
DEFAULT_RUN_DIR = "/run/kamailio"
# The account Kamailio runs as (Debian's unit: User=kamailio); kamailio_user / run_as_user everywhere.
DEFAULT_KAMAILIO_USER = "kamailio"
DEFAULT_KAMAILIO_GROUP = "kamailio"
# Kamailio's memory (-m / -M, MiB): commsgw_sbc's defaults and the modules' (kamailio_config, kamailio_service).
DEFAULT_SHARED_MEMORY_MB = 128  # the modules' default; the role passes the figure sized from the plan (kamailio.sizing)
DEFAULT_PRIVATE_MEMORY_MB = 8  # Kamailio's own default
DEFAULT_RPC_TIMEOUT_S = 3.0
# The SBC's own secret (kamailio.secret), never inside config_dir.
DEFAULT_SECRET_FILE = "/var/lib/kamailio-commsgw/secret.cfg"
