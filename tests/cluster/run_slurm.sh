#!/usr/bin/env bash
# The SLURM profile on a real cluster: installs Debian's SLURM and munge, starts a one-node cluster
# without accounting (no slurmdbd) on this machine, builds the dzoa study of the ci config through
# workflow/profiles/slurm in a copy of the project, and compares every output with a local build of
# the same target (`dpdl compare`: a run's provenance timing aside, every file must be equal).
# Every step that can block shares one deadline (DPDL_SLURM_TIMEOUT seconds, default 900), so a
# hang fails; the daemons this script started are stopped on exit. Skips where it cannot install
# SLURM (not root, or no apt-get). Runs in the project's environment, with the cluster extra:
# `uv run bash tests/cluster/run_slurm.sh` (uv syncs it), or activated after pip install -e '.[cluster]'.
set -euo pipefail
cd "$(dirname "$0")/../.."
deadline=$((SECONDS + ${DPDL_SLURM_TIMEOUT:-900}))
target=(--configfile config/ci.yaml --config 'studies=["dzoa"]')  # --config last: it takes every following word

bounded() { # run "$@", killed when the deadline passes
    local left=$((deadline - SECONDS))
    if [ "$left" -le 0 ]; then
        echo "run_slurm.sh: out of time before: $*" >&2
        return 124
    fi
    timeout -k 20 "$left" "$@"
}

wait_for() { # poll "$@" once a second, for at most 60 s
    local tries
    for tries in $(seq 60); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "run_slurm.sh: still failing after $tries s: $*" >&2
    return 1
}

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "SKIPPED: the SLURM test needs root and apt-get to install and start SLURM"
    exit 0
fi
if ! python -c 'import snakemake_executor_plugin_slurm' 2>/dev/null; then
    echo "run_slurm.sh: the SLURM executor plugin is missing: uv sync --extra cluster, or pip install -e '.[cluster]'" >&2
    exit 1
fi

packages=(slurmctld slurmd slurm-client munge)
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    bounded apt-get install -y -qq "${packages[@]}" >/dev/null ||
        { bounded apt-get update -qq && bounded apt-get install -y -qq "${packages[@]}" >/dev/null; }
fi

# Debian's path for slurm.conf: the plugin's job step drops SLURM_CONF before it calls srun. A
# slurm.conf that this script did not write belongs to a real installation, left alone.
conf=/etc/slurm/slurm.conf
mark="# written by dpdl's tests/cluster/run_slurm.sh; removed when it ends"
if [ -e "$conf" ] && [ "$(head -n 1 "$conf")" != "$mark" ]; then
    echo "SKIPPED: $conf exists (a SLURM installation this test must not replace)"
    exit 0
fi

work=$(mktemp -d /tmp/dpdl-slurm.XXXXXX)
daemons=()
cleanup() {
    local status=$?
    if [ ${#daemons[@]} -gt 0 ]; then
        scancel --user "$(id -un)" 2>/dev/null || true
        kill "${daemons[@]}" 2>/dev/null || true
        wait "${daemons[@]}" 2>/dev/null || true
    fi
    rm -f "$conf"
    if [ "$status" = 0 ]; then
        rm -rf "$work"
    else
        echo "run_slurm.sh failed; logs and both builds are in $work" >&2
    fi
}
trap cleanup EXIT

# munge authenticates SLURM's messages; use a running munged, or start one as the munge user.
if ! munge -n >/dev/null 2>&1; then
    install -d -o munge -g munge -m 0755 /run/munge
    setpriv --reuid munge --regid munge --init-groups munged --foreground >"$work/munged.out" 2>&1 &
    daemons+=($!)
    wait_for munge -n
fi

# One node as `slurmd -C` describes this machine, one partition, no accounting storage.
node=$(slurmd -C | head -n 1)
name=${node%% *}
mkdir "$work/state" "$work/spool"
cat >"$conf" <<EOF
$mark
ClusterName=dpdltest
SlurmctldHost=${name#NodeName=}(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i >"$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D >"$work/slurmd.out" 2>&1 &
daemons+=($!)
wait_for sh -c 'sinfo --noheader --format=%t | grep -qx idle'
sinfo
if sacct >/dev/null 2>&1; then
    echo "run_slurm.sh: sacct works here; this test needs a cluster without accounting" >&2
    exit 1
fi

# The same target twice, each in its own copy of the project: locally, then through the profile.
for build in local slurm; do
    mkdir "$work/$build"
    git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$work/$build"
done
start=$SECONDS
(cd "$work/local" && bounded snakemake --cores 2 "${target[@]}") >"$work/local.log" 2>&1 ||
    { tail -n 40 "$work/local.log"; exit 1; }
echo "local build: $((SECONDS - start)) s"
# The profile as a user runs it, with this cluster's partition and, as jobs here take seconds, the
# first status check after 10 s instead of 40.
start=$SECONDS
(cd "$work/slurm" && bounded snakemake --profile workflow/profiles/slurm --default-resources slurm_partition=test \
    --slurm-init-seconds-before-status-checks 10 "${target[@]}") >"$work/slurm.log" 2>&1 ||
    { tail -n 60 "$work/slurm.log"; exit 1; }
echo "SLURM build: $((SECONDS - start)) s," \
    "$(grep -c 'has been submitted with SLURM jobid' "$work/slurm.log") jobs through sbatch," \
    "$(grep -c '^localrule ' "$work/slurm.log") local"

bounded dpdl compare "$work/local" "$work/slurm" --under data/processed results figures
echo "SLURM test passed in $SECONDS s"
