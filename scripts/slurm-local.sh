#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for running the workflow through sbatch (`make slurm-up`,
# `make test-cluster`, docs/cluster.md). Everything it runs lives in one state directory it owns:
#
#   scripts/slurm-local.sh up       install Debian's slurmctld/slurmd/slurm-client/munge if missing (as root), write
#                                   slurm.conf for this host (its CPUs and memory read now), start munged, slurmctld
#                                   and slurmd, wait until the node is idle. Running it again on a live cluster is a
#                                   no-op.
#   scripts/slurm-local.sh down     cancel the cluster's jobs, stop the three daemons it started and any process a
#                                   cancelled job left behind, remove the state dir and the /etc/slurm link.
#   scripts/slurm-local.sh status   the daemons, the node and the partitions.
#   scripts/slurm-local.sh env      the line to source so that sbatch/squeue/sinfo talk to this cluster:
#                                   eval "$(scripts/slurm-local.sh env)"
#
# The cluster does not use the system munged: its slurm.conf, munge key and socket are in the state dir. Clients
# find slurm.conf through SLURM_CONF or at Slurm's default path, /etc/slurm/slurm.conf, which `up` links to the
# state dir's copy (the SLURM executor's job steps drop SLURM_CONF from their environment, so srun inside a job reads
# the default path); `up` refuses to replace a slurm.conf it did not write, `down` removes the link.
# Partitions: `cpu` (default) and `gpu`, the names profiles/slurm/config.yaml uses; the node has no GPU, so the
# `--gres=gpu:1` of profiles/slurm-paper stays unsatisfiable here.
# Accounting: no slurmdbd. Snakemake's SLURM executor polls with squeue, which works because MinJobAge keeps
# finished jobs in slurmctld for an hour; every finished job is also written by slurmctld to the job completion log
# ($STATE/jobcomp.log, JobCompType=jobcomp/filetxt), which is what tests/cluster counts.
#
# Settings (environment): NEURONEVAL_SLURM_STATE (default /tmp/neuroneval-slurm), NEURONEVAL_SLURM_CTLD_PORT (6817),
# NEURONEVAL_SLURM_SLURMD_PORT (6818).
set -euo pipefail

STATE=${NEURONEVAL_SLURM_STATE:-/tmp/neuroneval-slurm}
CTLD_PORT=${NEURONEVAL_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${NEURONEVAL_SLURM_SLURMD_PORT:-6818}
CONF=$STATE/slurm.conf
SYSTEM_CONF=/etc/slurm/slurm.conf
MUNGE_DIR=$STATE/munge
CLUSTER=neuroneval
PACKAGES=(slurmctld slurmd slurm-client munge)

die() { echo "slurm-local: error: $*" >&2; exit 1; }
say() { echo "slurm-local: $*"; }

# whether a process runs (a zombie, left for an init that does not reap, does not count)
alive() {
    local stat
    stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ $stat != Z* ]]
}

# pid from a pid file if that process is alive, else nothing
live_pid() {
    local file=$1 pid
    [[ -s $file ]] || return 1
    pid=$(<"$file")
    alive "$pid" && echo "$pid"
}

# processes of this cluster's jobs still running (a cancelled job's child that escaped its step): they carry
# SLURM_CLUSTER_NAME=neuroneval and a SLURM_JOB_ID in their environment
job_pids() {
    local environ pid variables
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}; pid=${pid%/environ}
        [[ $pid == "$$" ]] && continue
        variables=$({ tr '\0' '\n' <"$environ"; } 2>/dev/null) || continue
        if grep -qx "SLURM_CLUSTER_NAME=$CLUSTER" <<<"$variables" && grep -q "^SLURM_JOB_ID=" <<<"$variables"; then
            echo "$pid"
        fi
    done
}

stop_pid() {
    local pid=$1 what=$2
    alive "$pid" || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 20); do alive "$pid" || return 0; sleep 0.5; done
    say "$what (pid $pid) ignored SIGTERM; sending SIGKILL"
    kill -9 "$pid" 2>/dev/null || true
}

install_missing() {
    local missing=()
    for tool in slurmctld slurmd sbatch squeue sinfo scontrol scancel munged mungekey; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    ((${#missing[@]} == 0)) && return 0
    [[ $(id -u) == 0 ]] || die "missing ${missing[*]}; install them as root: apt-get install -y ${PACKAGES[*]}"
    say "installing ${PACKAGES[*]} (missing: ${missing[*]})"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
}

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

write_conf() {
    local host cpus mem sockets cores threads
    host=$(hostname -s)
    # the hardware as slurmd sees it: CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=…
    local detected
    detected=$(slurmd -C | head -1)
    field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$detected"; }
    cpus=$(field CPUs); sockets=$(field SocketsPerBoard); cores=$(field CoresPerSocket); threads=$(field ThreadsPerCore)
    mem=$(field RealMemory)
    [[ -n $cpus && -n $mem ]] || die "could not read CPUs/RealMemory from 'slurmd -C': $detected"
    mem=$((mem * 95 / 100))  # leave the OS a little; a node reporting less than its config would be drained
    cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh up on $(date -u +%FT%TZ); removed by scripts/slurm-local.sh down.
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_DIR/munge.socket
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
# containers: no cgroup plugins
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# no slurmdbd: squeue answers for finished jobs for an hour, and each finished job gets a line in the completion log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE/jobcomp.log
MinJobAge=3600
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$mem State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host Default=NO MaxTime=INFINITE State=UP
EOF
}

link_system_conf() {
    if [[ -e $SYSTEM_CONF || -L $SYSTEM_CONF ]] && [[ $(readlink "$SYSTEM_CONF") != "$CONF" ]]; then
        die "$SYSTEM_CONF exists and is not this cluster's; srun inside jobs would read it. Move it away first."
    fi
    mkdir -p "$(dirname "$SYSTEM_CONF")"
    ln -sfn "$CONF" "$SYSTEM_CONF"
}

node_state() {
    SLURM_CONF=$CONF sinfo -h -N -o %T 2>/dev/null | head -1
}

up() {
    [[ $(id -u) == 0 ]] || die "run as root: slurmd starts every job's processes as the submitting user"
    install_missing
    if live_pid "$STATE/slurmctld.pid" >/dev/null && live_pid "$STATE/slurmd.pid" >/dev/null \
        && live_pid "$MUNGE_DIR/munged.pid" >/dev/null; then
        say "already up (state in $STATE); node $(node_state)"
        return 0
    fi
    if [[ -e $STATE ]]; then
        say "found a stopped or partial cluster in $STATE; taking it down first"
        down
    fi
    for port in "$CTLD_PORT" "$SLURMD_PORT"; do
        port_free "$port" || die "port $port is in use (another slurmctld/slurmd?); set NEURONEVAL_SLURM_CTLD_PORT /" \
            "NEURONEVAL_SLURM_SLURMD_PORT to free ports"
    done
    mkdir -p "$STATE"/{ctld,slurmd} "$MUNGE_DIR"
    chmod 700 "$MUNGE_DIR"
    mungekey --create --keyfile="$MUNGE_DIR/munge.key" --force
    chmod 600 "$MUNGE_DIR/munge.key"
    /usr/sbin/munged --force --key-file="$MUNGE_DIR/munge.key" --socket="$MUNGE_DIR/munge.socket" \
        --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed" \
        || die "munged did not start; see $MUNGE_DIR/munged.log"
    write_conf
    link_system_conf
    touch "$STATE/jobcomp.log"
    slurmctld -f "$CONF" || die "slurmctld did not start; see $STATE/slurmctld.log"
    slurmd -f "$CONF" || die "slurmd did not start; see $STATE/slurmd.log"
    local state
    for _ in $(seq 60); do
        state=$(node_state)
        case $state in
            idle | mixed | allocated) break ;;
            down* | drain* | fail*) SLURM_CONF=$CONF scontrol update nodename="$(hostname -s)" state=resume || true ;;
        esac
        sleep 1
    done
    [[ $state == idle || $state == mixed || $state == allocated ]] \
        || die "node is '${state:-unknown}' after 60 s; see $STATE/slurmctld.log and $STATE/slurmd.log"
    say "up: $(grep '^NodeName' "$CONF")"
    say "partitions: $(SLURM_CONF=$CONF sinfo -h -o '%P %a %D' | tr '\n' ';')"
    say "clients: export SLURM_CONF=$CONF   (or: eval \"\$(scripts/slurm-local.sh env)\")"
}

down() {
    if [[ ! -e $STATE ]]; then
        [[ -L $SYSTEM_CONF && $(readlink "$SYSTEM_CONF") == "$CONF" ]] && rm -f "$SYSTEM_CONF"
        say "not up (no $STATE)"
        return 0
    fi
    # pids first: the daemons remove their pid files as they stop
    local daemons=() file pid
    for file in "$STATE/slurmd.pid" "$STATE/slurmctld.pid" "$MUNGE_DIR/munged.pid"; do
        pid=$(live_pid "$file") && daemons+=("$pid:$(basename "$file" .pid)")
    done
    if live_pid "$STATE/slurmctld.pid" >/dev/null; then
        local jobs
        jobs=$(SLURM_CONF=$CONF squeue -h -o %i 2>/dev/null | tr '\n' ' ')
        [[ -n ${jobs// /} ]] && { say "cancelling jobs $jobs"; SLURM_CONF=$CONF scancel $jobs || true; }
        SLURM_CONF=$CONF scontrol shutdown 2>/dev/null || true  # stops slurmctld and the slurmd it knows
    fi
    for entry in "${daemons[@]}"; do
        stop_pid "${entry%%:*}" "${entry#*:}"
    done
    for pid in $(job_pids); do
        stop_pid "$pid" "leftover job process $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-60)"
    done
    [[ -L $SYSTEM_CONF && $(readlink "$SYSTEM_CONF") == "$CONF" ]] && rm -f "$SYSTEM_CONF"
    rm -rf "$STATE"
    say "down; removed $STATE"
}

status() {
    [[ -e $STATE ]] || { say "not up (no $STATE)"; return 1; }
    local name file
    for name in munged slurmctld slurmd; do
        file=$STATE/$name.pid
        [[ $name == munged ]] && file=$MUNGE_DIR/munged.pid
        if pid=$(live_pid "$file"); then say "$name running (pid $pid)"; else say "$name not running"; fi
    done
    SLURM_CONF=$CONF sinfo
}

case ${1:-} in
    up) up ;;
    down) down ;;
    status) status ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *) echo "usage: $0 up|down|status|env" >&2; exit 2 ;;
esac
