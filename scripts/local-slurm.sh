#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, to try the workflow's Slurm profile on one machine.
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge.
#
# usage: scripts/local-slurm.sh start|stop|status [STATE_DIR]
#   STATE_DIR (default /tmp/waku-shadow-slurm) holds slurm.conf, the daemons' state and logs.
#   start writes a minimal slurm.conf: this host as the only node with its CPUs and memory, one
#   partition, no accounting database (submit with --slurm-status-command squeue --slurm-no-account).
set -euo pipefail
action=${1:-}
state=$(realpath -m "${2:-/tmp/waku-shadow-slurm}")
conf=/etc/slurm/slurm.conf
die() { echo "local-slurm: $*" >&2; exit 1; }

start() {
  for tool in slurmctld slurmd munged sinfo; do
    command -v "$tool" >/dev/null || die "$tool not found: apt-get install slurmctld slurmd slurm-client munge"
  done
  mkdir -p "$state/spool/ctld" "$state/spool/d" "$state/log" /etc/slurm
  [ -s /etc/munge/munge.key ] || mungekey -c
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  install -d -o munge -g munge /run/munge
  pgrep -x munged >/dev/null || su -s /bin/sh munge -c munged
  cpus=$(nproc)
  memory_mb=$(awk '/MemTotal/ { print int($2 / 1024) - 1024 }' /proc/meminfo)
  cat >"$conf" <<CONF
# written by waku-shadow's scripts/local-slurm.sh for a one-node cluster on this host
ClusterName=local
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/d
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
NodeName=localhost CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 30); do
    sinfo --noheader -o %T 2>/dev/null | grep -qx idle && { sinfo; return; }
    sleep 1
  done
  die "the node did not come up idle; see $state/log/"
}

stop() {
  pkill -x slurmd || true
  pkill -x slurmctld || true
  echo "stopped (state and logs kept in $state)"
}

case $action in
  start) start ;;
  stop) stop ;;
  status) sinfo && squeue ;;
  *) die "usage: $0 start|stop|status [STATE_DIR]" ;;
esac
