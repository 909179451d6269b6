#!/usr/bin/env bash
# serverlab: a Prometheus configuration that scrapes a Slurm load's agents
# and its server while they run, every second, printed on stdout.
#
#   export SERVERLAB_METRICS_PORT=9470 SERVERLAB_SERVER_METRICS_PORT=9464
#   job=$(sbatch --parsable --array=0-3 deploy/slurm/load.sbatch)
#   deploy/slurm/prometheus.sh serverlab-load-$job/targets > prometheus.yml
#   prometheus --config.file=prometheus.yml
#
# load.sbatch writes one file_sd targets file per agent into TARGETS
# (agent-I.json: the task's node and SERVERLAB_METRICS_PORT) and, from task
# 0, server.json (SERVERLAB_ADDR's host and SERVERLAB_SERVER_METRICS_PORT).
# Prometheus watches TARGETS/*.json and scrapes each agent as soon as its
# file appears, so the configuration can be written and Prometheus started
# before the array's tasks run. TARGETS is made absolute here: Prometheus
# would read a relative path from the configuration file's directory.
# Every target carries `role` (server or load) and `slurm_job`, and an
# agent `slurm_task`; the agents' own samples carry `agent` (I/N).
#
# Variables:
#   SERVERLAB_SCRAPE_INTERVAL  how often to scrape (default 1s)
# See deploy/README.md.
set -euo pipefail

die() {
  printf 'prometheus.sh: %s\n' "$*" >&2
  exit 2
}

targets="${1:?usage: prometheus.sh TARGETS_DIR > prometheus.yml}"
interval="${SERVERLAB_SCRAPE_INTERVAL:-1s}"
[[ "$interval" =~ ^[0-9]{1,6}(ms|s|m)$ ]] ||
  die "SERVERLAB_SCRAPE_INTERVAL must be a duration like 1s or 500ms, not '$interval'"
mkdir -p -- "$targets"
targets="$(cd -- "$targets" && pwd)"
[[ "$targets" != *"'"* ]] || die "TARGETS_DIR: '$targets' has a quote in it"

cat <<YAML
# Written by deploy/slurm/prometheus.sh for the targets in $targets.
global:
  scrape_interval: $interval
  scrape_timeout: $interval
scrape_configs:
  - job_name: serverlab
    file_sd_configs:
      - files: ['$targets/*.json']
        refresh_interval: 5s
YAML
