#!/bin/sh
# handover.sh: hands a HotUpgrade sidecar's server over from the old container
# to the new one: the old one stops it, then the new one starts it, so that
# the two never both hold the port (unless the old one does not answer; see
# HANDOVER_TIMEOUT below).
#
#   handover.sh serve -- COMMAND [ARG...]   run as the container's command
#   handover.sh ready                       the container's readiness probe
#
# A HotUpgrade sidecar `x` runs as two containers, x-1 and x-2, with the same
# command, mounts and probes; one runs the sidecar's image, the other the
# set's hotUpgradeEmptyImage. An upgrade gives the idle one the new image, so
# for a while both run the sidecar. Each container learns its role from two
# variables the pod's annotations give it when it starts (they never change
# while it runs):
#
#   SIDECARSET_VERSION   SIDECARSET_VERSION_ALT   role
#   0                    any                      the empty copy: idle
#   > 0                  0                        fresh start: run the server
#   > ALT                > 0                      the new one: take the server
#                                                 over from the partner
#   < ALT                > 0                      the old one restarted during
#                                                 a swap: idle, never take over
#
# The two containers share the pod's network (two servers cannot listen on one
# port) and a directory both mount, HANDOVER_DIR, which holds the handshake:
#
#   owner          the version that runs the server
#   takeover       a new container's request: its version
#   released       the version the server was released to
#   took-over.<v>  version v, a new one, has taken over (the readiness probe)
#
# Each file is written whole to a temporary name and renamed, so a reader sees
# the old content or the new, never half a line.
#
# The new one writes `takeover`, then waits for `released` to carry its
# version; the owner, which looks every HANDOVER_POLL_INTERVAL, stops its
# server (SIGTERM, SIGKILL after HANDOVER_STOP_GRACE seconds), writes
# `released` and idles. The new one then writes `owner`, starts the server
# and becomes ready; only then does the rollout reset the old container to
# the empty image. A container that runs no server (the empty copy, an old
# one that restarted, an owner that has released) releases at once, as there
# is nothing to stop. If no release comes within HANDOVER_TIMEOUT seconds,
# the new one takes over anyway: the partner is gone or does not run this
# script, and waiting longer would hold the rollout at a container that never
# becomes ready. Should the partner still be serving after all, the new
# server cannot listen and exits, the container restarts and takes over again
# (it already owns), and the old owner, seeing a higher version in `owner`,
# stops its own server.
#
# Settings (environment):
#   HANDOVER_DIR             the shared directory (default /var/run/handover);
#                            one per hot sidecar: it holds one pair's state
#   HANDOVER_POLL_INTERVAL   seconds between looks at the directory (default 1;
#                            fractions such as 0.2 work with busybox and GNU
#                            sleep). The server is down for about its own stop
#                            time plus one interval during a handover.
#   HANDOVER_TIMEOUT         seconds the new one waits for the release (default 60)
#   HANDOVER_STOP_GRACE      seconds the server has to exit after SIGTERM before
#                            it is killed (default 10; keep it under the pod's
#                            terminationGracePeriodSeconds)
#
# POSIX sh only (busybox ash, dash): the sidecar image needs sh, sleep, date,
# mv, rm, mkdir and kill, and so does hotUpgradeEmptyImage, since the empty
# copy runs the same command and readiness probe.

set -u

DIR=${HANDOVER_DIR:-/var/run/handover}
POLL=${HANDOVER_POLL_INTERVAL:-1}
TIMEOUT=${HANDOVER_TIMEOUT:-60}
STOP_GRACE=${HANDOVER_STOP_GRACE:-10}

# What the process knows of itself; set below.
VERSION=
ALT=
ROLE=
server=   # the server's pid while it runs
nap_pid=  # the pid of the current sleep, so a signal can cut it short
term=     # set by SIGTERM/SIGINT

# printf, not echo: some shells' echo reads backslashes in the text (the
# server's command line is logged as given).
usage() {
  printf '%s\n' 'usage: handover.sh serve -- COMMAND [ARG...] | handover.sh ready' >&2
  exit 2
}

die() {
  printf 'handover: %s\n' "$*" >&2
  exit 2
}

log() {
  printf 'handover (version %s, %s): %s\n' "$VERSION" "$ROLE" "$*" >&2
}

# A version is a decimal number (a SidecarSet's resourceVersion, "1" or "0").
# Shell arithmetic and test(1) handle 64-bit numbers; 18 digits stay well
# inside that, and etcd revisions will not reach them.
is_version() {
  case $1 in '' | *[!0-9]*) return 1 ;; esac
  [ ${#1} -le 18 ]
}

is_seconds() {
  case $1 in '' | . | *[!0-9.]* | *.*.*) return 1 ;; esac
}

check_settings() {
  is_seconds "$POLL" || die "HANDOVER_POLL_INTERVAL must be a number of seconds, got \"$POLL\""
  case $TIMEOUT in '' | *[!0-9]*) die "HANDOVER_TIMEOUT must be a whole number of seconds, got \"$TIMEOUT\"" ;; esac
  case $STOP_GRACE in '' | *[!0-9]*) die "HANDOVER_STOP_GRACE must be a whole number of seconds, got \"$STOP_GRACE\"" ;; esac
}

# The role, from the two variables the pod's annotations gave this container.
decide_role() {
  VERSION=${SIDECARSET_VERSION-}
  ALT=${SIDECARSET_VERSION_ALT-}
  is_version "$VERSION" || die "SIDECARSET_VERSION must be a decimal number, got \"$VERSION\": run this as a HotUpgrade sidecar, whose containers get it from the pod's version annotations"
  is_version "$ALT" || die "SIDECARSET_VERSION_ALT must be a decimal number, got \"$ALT\": run this as a HotUpgrade sidecar, whose containers get it from the pod's versionalt annotations"
  if [ "$VERSION" -eq 0 ]; then
    ROLE=empty
  elif [ "$ALT" -eq 0 ]; then
    ROLE=fresh
  elif [ "$VERSION" -gt "$ALT" ]; then
    ROLE=new
  elif [ "$VERSION" -lt "$ALT" ]; then
    ROLE=old
  else
    # Never written by a rollout: the two containers of a pair always differ.
    die "SIDECARSET_VERSION and SIDECARSET_VERSION_ALT are both $VERSION: no role fits"
  fi
}

# Reads a version file into $got; fails when it is missing or holds no version.
get() {
  got=
  [ -f "$DIR/$1" ] || return 1
  IFS= read -r got 2>/dev/null <"$DIR/$1" || [ -n "$got" ] || return 1
  is_version "$got"
}

# Writes a file whole: a temporary name, then a rename over the real one. The
# temporary name carries the version because both containers may have the
# same pid (each is pid 1 of its own container).
put() {
  tmp="$DIR/.$1.$VERSION.$$"
  printf '%s\n' "$2" >"$tmp" && mv -f "$tmp" "$DIR/$1" || die "cannot write $DIR/$1"
}

# Whole seconds: a wait of N seconds ends when the clock is past start + N,
# after at least N and at most N + 1 seconds.
now() {
  date +%s
}

# Sleeps one interval in the background and waits for it: a trapped signal
# interrupts `wait` at once, where it would wait for a foreground sleep.
nap() {
  sleep "$POLL" &
  nap_pid=$!
  wait "$nap_pid"
  nap_pid=
}

on_signal() {
  term=1
  if [ -n "$nap_pid" ]; then kill "$nap_pid" 2>/dev/null; fi
}

server_running() {
  [ -n "$server" ] && kill -0 "$server" 2>/dev/null
}

# SIGTERM to the server, SIGKILL after the grace period; returns once it has
# exited. `nap` waits on the shell's children, which also reaps the server
# when it exits (until then kill -0 would still find it as a zombie).
stop_server() {
  kill -TERM "$server" 2>/dev/null
  deadline=$(($(now) + STOP_GRACE))
  killed=
  while server_running; do
    if [ -z "$killed" ] && [ "$(now)" -gt "$deadline" ]; then
      log "the server (pid $server) did not exit within ${STOP_GRACE}s of SIGTERM: killing it"
      kill -KILL "$server" 2>/dev/null
      killed=1
    fi
    nap
  done
  wait "$server" 2>/dev/null
  server=
}

# A takeover request from a higher version than ours, in $got.
takeover_pending() {
  get takeover && [ "$got" -gt "$VERSION" ]
}

# Idles until SIGTERM (the rollout replaces this container with the empty
# image, or the pod goes away). This container runs no server, so a takeover
# request can only come from its partner, and nothing has to be stopped for
# it: it is released at once.
idle() {
  log "$1"
  while [ -z "$term" ]; do
    if takeover_pending; then
      request=$got
      if ! get released || [ "$got" -ne "$request" ]; then
        put released "$request"
        log "version $request asked to take over; this container runs no server: released"
      fi
    fi
    nap
  done
  log 'stopping (signal)'
  exit 0
}

# A fresh start is the only container with the sidecar's image (its partner
# is empty), so what the directory holds is left from earlier containers:
# forget it. A takeover request from a higher version stays (it was written
# while this one was restarting): this container releases to it at its first
# look.
reset_state() {
  rm -f "$DIR/released" "$DIR"/took-over.*
  if get takeover && [ "$got" -le "$VERSION" ]; then rm -f "$DIR/takeover"; fi
}

# The new one: ask the owner to release and wait for it. Returns when this
# container may run the server.
take_over() {
  if get owner && [ "$got" -eq "$VERSION" ]; then
    log 'this version owns the server already (the container restarted): serving again'
    return
  fi
  if get released && [ "$got" -eq "$VERSION" ]; then
    log "version $ALT released the server before this container restarted: taking over"
    return
  fi
  put takeover "$VERSION"
  log "asking version $ALT to release the server (waiting up to ${TIMEOUT}s)"
  deadline=$(($(now) + TIMEOUT))
  while :; do
    if get released && [ "$got" -eq "$VERSION" ]; then
      log "version $ALT released the server: taking over"
      break
    fi
    if [ -n "$term" ]; then
      # Withdraw the request, so that the owner keeps serving.
      if get takeover && [ "$got" -eq "$VERSION" ]; then rm -f "$DIR/takeover"; fi
      log 'stopping (signal) before taking over'
      exit 0
    fi
    if [ "$(now)" -gt "$deadline" ]; then
      log "no release from version $ALT within ${TIMEOUT}s: taking over anyway (the partner is gone or does not run handover.sh)"
      break
    fi
    nap
  done
  if get takeover && [ "$got" -eq "$VERSION" ]; then rm -f "$DIR/takeover"; fi
}

# Owns the server: runs it, and gives it up to a higher version that asks (or
# that took over without a release); exits with the server's status if it
# stops by itself, so that the kubelet restarts the container.
serve_until_released() {
  put owner "$VERSION"
  # `exec` in a subshell, so that $! is the server itself: some shells (busybox
  # ash with traps set) fork once more for a plain `"$@" &`, and a SIGTERM to
  # that intermediate shell would leave the server running. The traps are
  # lifted around the fork: a child still holding this shell's handler when
  # an early SIGTERM comes (a takeover request already waiting) would swallow
  # it and exec the server anyway; without them the signal ends the child, as
  # it would end the server. (A SIGTERM to this shell in that instant goes
  # unhandled: it ends the shell, or, as a container's pid 1, is dropped, and
  # the kubelet kills the container when its grace period is over.)
  trap - TERM INT
  (exec "$@") &
  server=$!
  trap on_signal TERM INT
  log "serving (pid $server): $*"
  # Ready from now on (`handover.sh ready`): the rollout may reset the partner.
  if [ "$ROLE" = new ]; then put "took-over.$VERSION" "$VERSION"; fi
  while [ -z "$term" ]; do
    if ! server_running; then
      wait "$server"
      status=$?
      server=
      log "the server exited with status $status"
      exit "$status"
    fi
    if takeover_pending; then
      request=$got
      log "version $request asks to take over: stopping the server"
      stop_server
      put released "$request"
      idle "released the server to version $request: idle until this container is replaced"
    fi
    if get owner && [ "$got" -gt "$VERSION" ]; then
      request=$got
      log "version $request took over without a release: stopping the server"
      stop_server
      idle "version $request owns the server: idle until this container is replaced"
    fi
    nap
  done
  log 'stopping the server (signal)'
  stop_server
  exit 0
}

serve() {
  [ "$#" -gt 0 ] || usage
  mkdir -p "$DIR" || die "cannot create $DIR"
  trap on_signal TERM INT
  case $ROLE in
    empty) idle 'the empty copy: idle until an upgrade gives this container the sidecar' ;;
    old) idle "restarted during a swap to version $ALT: idle, the new container serves" ;;
    fresh)
      reset_state
      serve_until_released "$@"
      ;;
    new)
      take_over
      serve_until_released "$@"
      ;;
  esac
}

# Ready unless this is the new container and it has not taken over yet: the
# rollout resets the old container once the new one is ready, so readiness
# must wait for the takeover. Every other role is ready, the old container
# included while it hands over and idles, since the pod is Ready only while
# all its containers are.
ready() {
  if [ "$ROLE" = new ] && [ ! -f "$DIR/took-over.$VERSION" ]; then
    printf 'not ready: version %s has not taken over from version %s yet\n' "$VERSION" "$ALT"
    exit 1
  fi
  exit 0
}

[ "$#" -gt 0 ] || usage
command=$1
shift
case $command in
  serve)
    [ "${1-}" = -- ] || usage
    shift
    check_settings
    decide_role
    serve "$@"
    ;;
  ready)
    [ "$#" -eq 0 ] || usage
    decide_role
    ready
    ;;
  *) usage ;;
esac
