#!/usr/bin/env bash
# Local single-node SLURM cluster (with accounting) for the integration tests.
#
# Usage: tests/slurm/local_cluster.sh up|down|status|purge
#
#   up      install the Debian packages if missing, write the configs, start
#           munged, mariadbd, slurmdbd, slurmctld and slurmd (in that order,
#           each with a bounded readiness wait), register the cluster in the
#           accounting database and wait until the node is idle.  Safe to run
#           again while the cluster is up: running daemons are detected and
#           reused.
#   down    stop every daemon that `up` started (running jobs are cancelled
#           first) and verify none is left.  Fine when nothing runs.
#   status  print each daemon's state, sinfo and where the logs are;
#           exit 0 when the whole cluster is up, 3 otherwise.
#   purge   `down`, then delete the state directory (accounting database,
#           slurmctld state, logs).  Configs in /etc/slurm are left.
#
# Exit codes: 0 ok; 1 failure (reason on stderr); 2 unsupported machine
# (not root, not Debian-like, no apt-get, or a foreign /etc/slurm/slurm.conf)
# — a test should skip with the printed reason; 3 `status`: not fully up.
#
# State lives in $POLYVSE_SLURM_DIR (default /tmp/polyvse-slurm):
#   log/   munged.log mariadb.log slurmdbd.log slurmctld.log slurmd.log apt.log
#   run/   pid files and the mariadb socket
#   mysql/ the accounting database (own mariadb instance on 127.0.0.1:$DB_PORT)
#   ctld/  slurmctld state (job id counter survives down/up)
#   spool/ slurmd spool
# Configs: /etc/slurm/slurm.conf (the executor plugin strips SLURM_* from the
# job step environment, so SLURM_CONF elsewhere would break its inner srun)
# and /etc/slurm/slurmdbd.conf (mode 600, owner slurm).
# No systemd is needed: daemons are started by hand and self-background.
set -euo pipefail

STATE=${POLYVSE_SLURM_DIR:-/tmp/polyvse-slurm}
CLUSTER=${POLYVSE_SLURM_CLUSTER:-polyvse}
DB_PORT=${POLYVSE_SLURM_DB_PORT:-3307}
ACCOUNT=polyvse # extra account so a profile can test `slurm_account`
PARTITION=debug
SLURM_CONF=/etc/slurm/slurm.conf
DBD_CONF=/etc/slurm/slurmdbd.conf
MARKER="# Written by polyvse tests/slurm/local_cluster.sh; safe to delete."
PACKAGES=(slurm-wlm slurmdbd munge mariadb-server procps)
LOG=$STATE/log
RUN=$STATE/run
MYSQL_SOCK=$RUN/mysql/mysqld.sock
MUNGE_PID=/run/munge/munged.pid # munged's compiled-in default; clients use its socket

say() { echo "local_cluster: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
unsupported() { say "UNSUPPORTED: $*"; exit 2; }

# --------------------------------------------------------------- preconditions
check_machine() {
    [[ $(id -u) -eq 0 ]] || unsupported "must run as root (starts system daemons, writes /etc/slurm)"
    local like=""
    if [[ -r /etc/os-release ]]; then
        # shellcheck disable=SC1091
        like=$(. /etc/os-release; echo " ${ID:-} ${ID_LIKE:-} ")
    fi
    [[ $like == *" debian "* || -e /etc/debian_version ]] ||
        unsupported "not a Debian-like system (needs apt packages slurm-wlm, slurmdbd, munge, mariadb-server)"
    command -v apt-get >/dev/null || unsupported "apt-get not found"
    for f in "$SLURM_CONF" "$DBD_CONF"; do
        if [[ -e $f ]] && ! grep -qF "$MARKER" "$f"; then
            unsupported "$f exists and was not written by this script; refusing to overwrite a real SLURM config"
        fi
    done
}

# -------------------------------------------------------------------- packages
have_packages() {
    local b
    for b in slurmctld slurmd slurmdbd munged mariadbd mariadb-install-db sacct sacctmgr sinfo sbatch pgrep; do
        command -v "$b" >/dev/null 2>&1 || [[ -x /usr/sbin/$b ]] || return 1
    done
}

# Runs an apt-get command, retrying for up to 2 minutes while another process
# holds the dpkg/apt lock.
apt_retry() {
    local deadline=$((SECONDS + 120)) out
    while :; do
        if out=$("$@" 2>&1); then
            echo "$out" >>"$LOG/apt.log"
            return 0
        fi
        echo "$out" >>"$LOG/apt.log"
        if grep -qiE 'could not get lock|unable to acquire|unable to lock|is another process using it' <<<"$out" &&
            ((SECONDS < deadline)); then
            say "apt/dpkg lock held by another process; retrying"
            sleep 3
            continue
        fi
        tail -n 20 <<<"$out" >&2
        return 1
    done
}

install_packages() {
    have_packages && return 0
    say "installing ${PACKAGES[*]} (log: $LOG/apt.log)"
    # Keep maintainer scripts from starting their own munge/mariadb services:
    # this script starts (and stops) every daemon itself.
    local policy=/usr/sbin/policy-rc.d own_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        own_policy=1
    fi
    local rc=0
    export DEBIAN_FRONTEND=noninteractive
    apt_retry apt-get -q -o DPkg::Lock::Timeout=120 update &&
        apt_retry apt-get install -y -q -o DPkg::Lock::Timeout=120 -o Dpkg::Use-Pty=0 \
            --no-install-recommends "${PACKAGES[@]}" || rc=$?
    ((own_policy)) && rm -f "$policy"
    ((rc == 0)) || die "apt-get install ${PACKAGES[*]} failed (see $LOG/apt.log)"
    have_packages || die "packages installed but SLURM/munge/mariadb binaries still missing"
}

# --------------------------------------------------------------------- helpers
# pid_of NAME PIDFILE: prints the pid if PIDFILE names a live process called NAME.
pid_of() {
    local name=$1 pidfile=$2 pid
    [[ -r $pidfile ]] || return 1
    pid=$(tr -dc '0-9' <"$pidfile")
    [[ -n $pid ]] && [[ -r /proc/$pid/comm ]] || return 1
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name"* ]] || return 1
    echo "$pid"
}

# wait_for SECONDS WHAT CMD...: polls CMD every 0.5 s until it succeeds.
wait_for() {
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$(($(date +%s) + limit))
    until "$@" >/dev/null 2>&1; do
        (($(date +%s) < deadline)) || return 1
        sleep 0.5
    done
    say "$what ready"
}

# write_if_changed PATH OWNER MODE: writes stdin to PATH only if it differs.
write_if_changed() {
    local path=$1 owner=$2 mode=$3 tmp
    tmp=$(mktemp "$path.XXXXXX")
    cat >"$tmp"
    chown "$owner" "$tmp"
    chmod "$mode" "$tmp"
    if [[ -e $path ]] && cmp -s "$tmp" "$path"; then
        rm -f "$tmp"
        return 1
    fi
    mv -f "$tmp" "$path"
}

mark_ours() { touch "$RUN/$1.ours"; }
is_ours() { [[ -e $RUN/$1.ours ]]; }

# stop_daemon NAME PIDFILE: SIGTERM, wait up to 20 s, then SIGKILL.
stop_daemon() {
    local name=$1 pidfile=$2 pid i
    if ! is_ours "$name"; then
        return 0
    fi
    if pid=$(pid_of "$name" "$pidfile"); then
        say "stopping $name (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 40; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name (pid $pid) ignored SIGTERM for 20 s; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
        fi
    fi
    rm -f "$RUN/$name.ours"
}

# ------------------------------------------------------------------- configure
prepare_dirs() {
    mkdir -p "$STATE" "$LOG" "$RUN" "$RUN/slurm" "$RUN/mysql" "$STATE/ctld" "$STATE/spool" /etc/slurm
    chmod 755 "$STATE" "$LOG" "$RUN"
    chown slurm:slurm "$RUN/slurm" "$STATE/ctld"
    chown mysql:mysql "$RUN/mysql"
    local f
    for f in slurmdbd slurmctld; do
        touch "$LOG/$f.log"
        chown slurm:slurm "$LOG/$f.log"
    done
    touch "$LOG/mariadb.log" "$LOG/munged.log" "$LOG/slurmd.log"
    chown mysql:mysql "$LOG/mariadb.log"
    chown munge:munge "$LOG/munged.log"
    chmod 640 "$LOG/munged.log"
}

db_password() {
    local f=$STATE/db_password
    if [[ ! -s $f ]]; then
        (umask 077; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$f")
    fi
    cat "$f"
}

write_configs() {
    local node host
    # The node line must match the hardware (RealMemory above the real value
    # drains the node), so take it from slurmd itself.
    node=$(slurmd -C 2>/dev/null | grep '^NodeName=') || die "'slurmd -C' failed"
    host=$(awk '{print $1}' <<<"$node" | cut -d= -f2)
    SLURM_CONF_CHANGED=0
    write_if_changed "$SLURM_CONF" root:root 644 <<EOF && SLURM_CONF_CHANGED=1
$MARKER
# Single-node test cluster '$CLUSTER' with accounting through slurmdbd.
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
# Finished jobs stay visible to squeue/scontrol for 10 min.
MinJobAge=600
KillWait=10
SchedulerType=sched/backfill
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$RUN/slurm/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageEnforce=associations
# sacct's Comment column then shows the rule name the executor plugin passes
# as --comment (e.g. rule_train).
AccountingStoreFlags=job_comment
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    write_if_changed "$DBD_CONF" slurm:slurm 600 <<EOF || true
$MARKER
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=slurm
DebugLevel=info
LogFile=$LOG/slurmdbd.log
PidFile=$RUN/slurm/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$(db_password)
StorageLoc=slurm_acct_db
EOF
}

# ----------------------------------------------------------------------- munge
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
    if pid_of munged "$MUNGE_PID" >/dev/null && munge_ok; then
        say "munged already running"
        return 0
    fi
    if [[ ! -s /etc/munge/munge.key ]]; then
        mungekey --create --keyfile=/etc/munge/munge.key >/dev/null ||
            die "could not create /etc/munge/munge.key"
        chown munge:munge /etc/munge/munge.key
        chmod 600 /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/lib/munge
    chown munge:munge /run/munge /var/lib/munge
    chmod 755 /run/munge
    runuser -u munge -- munged --log-file="$LOG/munged.log" ||
        die "munged failed to start (see $LOG/munged.log)"
    mark_ours munged
    wait_for 15 munged munge_ok || die "munged not answering after 15 s (see $LOG/munged.log)"
}

# --------------------------------------------------------------------- mariadb
MYSQL_PID=$RUN/mysql/mariadbd.pid
sql() { mariadb --no-defaults --socket="$MYSQL_SOCK" -u root --batch "$@"; }

start_mariadb() {
    if pid_of mariadbd "$MYSQL_PID" >/dev/null && sql -e 'SELECT 1' >/dev/null 2>&1; then
        say "mariadbd already running"
    else
        if [[ ! -d $STATE/mysql/mysql ]]; then
            say "initialising accounting database in $STATE/mysql"
            mkdir -p "$STATE/mysql"
            chown mysql:mysql "$STATE/mysql"
            mariadb-install-db --no-defaults --user=mysql --datadir="$STATE/mysql" \
                --auth-root-authentication-method=socket --skip-test-db \
                >>"$LOG/mariadb.log" 2>&1 || die "mariadb-install-db failed (see $LOG/mariadb.log)"
        fi
        # Own instance on 127.0.0.1:$DB_PORT so a system mariadb is never touched.
        setsid mariadbd --no-defaults --user=mysql --datadir="$STATE/mysql" \
            --socket="$MYSQL_SOCK" --pid-file="$MYSQL_PID" --port="$DB_PORT" \
            --bind-address=127.0.0.1 --log-error="$LOG/mariadb.log" \
            --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 --innodb-use-native-aio=0 --skip-log-bin \
            </dev/null >>"$LOG/mariadb.log" 2>&1 &
        mark_ours mariadbd
        wait_for 60 mariadbd sql -e 'SELECT 1' ||
            die "mariadbd not answering on $MYSQL_SOCK after 60 s (see $LOG/mariadb.log)"
    fi
    local pw
    pw=$(db_password)
    sql <<EOF || die "could not create the slurm database user (see $LOG/mariadb.log)"
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$pw';
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$pw';
ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF
}

# ---------------------------------------------------------------------- slurm
SLURMDBD_PID=$RUN/slurm/slurmdbd.pid
SLURMCTLD_PID=$RUN/slurm/slurmctld.pid
SLURMD_PID=$RUN/slurmd.pid

dbd_ok() { sacctmgr -n -P show cluster format=cluster >/dev/null 2>&1; }
ctld_ok() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
node_state() { sinfo -h -N -o '%t' 2>/dev/null | head -n 1; }
node_idle() { [[ $(node_state) == idle ]]; }

start_slurmdbd() {
    if pid_of slurmdbd "$SLURMDBD_PID" >/dev/null && dbd_ok; then
        say "slurmdbd already running"
        return 0
    fi
    slurmdbd || die "slurmdbd failed to start (see $LOG/slurmdbd.log)"
    mark_ours slurmdbd
    wait_for 60 slurmdbd dbd_ok || die "slurmdbd not answering sacctmgr after 60 s (see $LOG/slurmdbd.log)"
}

register_accounting() {
    if ! sacctmgr -n -P show cluster format=cluster | grep -qx "$CLUSTER"; then
        sacctmgr -i add cluster "$CLUSTER" >/dev/null || die "sacctmgr add cluster $CLUSTER failed"
    fi
    if ! sacctmgr -n -P show account format=account | grep -qx "$ACCOUNT"; then
        sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" \
            Description="polyvse test account" Organization=polyvse >/dev/null ||
            die "sacctmgr add account $ACCOUNT failed"
    fi
    # AccountingStorageEnforce=associations: only users with an association
    # may submit.  root gets the 'root' account with the cluster; give root
    # (and the user behind sudo, if any) the '$ACCOUNT' account too.
    local user
    for user in root ${SUDO_USER:-}; do
        if ! sacctmgr -n -P show assoc where user="$user" account="$ACCOUNT" format=account | grep -qx "$ACCOUNT"; then
            sacctmgr -i add user "$user" Account="$ACCOUNT" Cluster="$CLUSTER" >/dev/null ||
                die "sacctmgr add user $user account=$ACCOUNT failed"
        fi
    done
}

start_slurmctld() {
    if pid_of slurmctld "$SLURMCTLD_PID" >/dev/null && ctld_ok; then
        say "slurmctld already running"
        if ((SLURM_CONF_CHANGED)); then
            say "$SLURM_CONF changed; scontrol reconfigure"
            scontrol reconfigure || die "scontrol reconfigure failed (see $LOG/slurmctld.log)"
        fi
        return 0
    fi
    slurmctld || die "slurmctld failed to start (see $LOG/slurmctld.log)"
    mark_ours slurmctld
    wait_for 30 slurmctld ctld_ok || die "slurmctld not UP after 30 s (see $LOG/slurmctld.log)"
}

start_slurmd() {
    if pid_of slurmd "$SLURMD_PID" >/dev/null; then
        say "slurmd already running"
    else
        slurmd || die "slurmd failed to start (see $LOG/slurmd.log)"
        mark_ours slurmd
    fi
    if ! wait_for 30 "node idle" node_idle; then
        sinfo -N -l >&2 || true
        sinfo -R >&2 || true
        die "node not idle after 30 s (state '$(node_state)'; see $LOG/slurmd.log and $LOG/slurmctld.log)"
    fi
}

# -------------------------------------------------------------------- commands
cmd_up() {
    check_machine
    local t0=$SECONDS
    mkdir -p "$LOG" "$RUN"
    install_packages
    prepare_dirs
    write_configs
    start_munge
    start_mariadb
    start_slurmdbd
    register_accounting
    start_slurmctld
    start_slurmd
    say "cluster '$CLUSTER' up in $((SECONDS - t0)) s; partition '$PARTITION', account '$ACCOUNT'; logs in $LOG"
}

cancel_all_jobs() {
    ctld_ok || return 0
    local ids i
    mapfile -t ids < <(squeue -h -o '%i' 2>/dev/null || true)
    ((${#ids[@]})) || return 0
    say "cancelling jobs: ${ids[*]}"
    scancel "${ids[@]}" 2>/dev/null || true
    for ((i = 0; i < 30; i++)); do
        [[ -z $(squeue -h -o '%i' 2>/dev/null) ]] && break
        sleep 0.5
    done
}

cmd_down() {
    [[ $(id -u) -eq 0 ]] || unsupported "must run as root"
    [[ -d $RUN ]] || { say "nothing to stop ($RUN missing)"; return 0; }
    is_ours slurmctld && cancel_all_jobs
    stop_daemon slurmd "$SLURMD_PID"
    # Job steps of a killed slurmd would outlive it.
    local pid
    for pid in $(pgrep -x slurmstepd || true); do
        say "killing leftover slurmstepd $pid"
        kill -KILL "$pid" 2>/dev/null || true
    done
    stop_daemon slurmctld "$SLURMCTLD_PID"
    stop_daemon slurmdbd "$SLURMDBD_PID"
    stop_daemon mariadbd "$MYSQL_PID"
    stop_daemon munged "$MUNGE_PID"
    local left="" name
    for name in slurmd slurmctld slurmdbd slurmstepd; do
        pgrep -x "$name" >/dev/null && left+=" $name"
    done
    pid_of mariadbd "$MYSQL_PID" >/dev/null && left+=" mariadbd"
    [[ -z $left ]] || die "still running after down:$left"
    say "cluster down"
}

cmd_status() {
    local all_up=0 name pidfile pid
    [[ $(id -u) -eq 0 ]] || say "not root: some pid files are unreadable, so daemons may show as stopped"
    for name in munged mariadbd slurmdbd slurmctld slurmd; do
        case $name in
        munged) pidfile=$MUNGE_PID ;;
        mariadbd) pidfile=$MYSQL_PID ;;
        slurmdbd) pidfile=$SLURMDBD_PID ;;
        slurmctld) pidfile=$SLURMCTLD_PID ;;
        slurmd) pidfile=$SLURMD_PID ;;
        esac
        if pid=$(pid_of "$name" "$pidfile"); then
            printf '%-10s running (pid %s)%s\n' "$name" "$pid" "$(is_ours "$name" || echo ', not started by this script')"
        else
            printf '%-10s stopped\n' "$name"
            all_up=3
        fi
    done
    if ((all_up == 0)); then
        sinfo || all_up=3
        node_idle || [[ $(node_state) == mix || $(node_state) == alloc ]] || all_up=3
    fi
    echo "state: $STATE   logs: $LOG/{munged,mariadb,slurmdbd,slurmctld,slurmd}.log"
    return $all_up
}

cmd_purge() {
    cmd_down
    rm -rf "$STATE"
    say "removed $STATE"
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
purge) cmd_purge ;;
*)
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 64
    ;;
esac
