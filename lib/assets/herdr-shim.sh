#!/usr/bin/env bash
# mam-herdr-shim: stands in front of the real herdr (installed by `mam shim install`; docs/herdr.md)
#
# Commands that claim a pane (workspace create, tab create, pane split, agent start) first take
# the target server's pane-claim lock on fd 9 and keep it open while the real herdr runs, so
# concurrent agents never grab the same pane. Everything else is passed through unchanged.
#   -L NAME            → --session NAME (herdr has no -L)
#   HERDR_SESSION_NAME → --session NAME when no --session/-L is given (empty or "default": ambient)
#   --session default  → herdr's default server (and its lock), as herdr reads it
#   MAM_REAL_HERDR     → the real herdr; else HERDR_BIN_PATH, the herdr that runs this pane's
#                        server (herdr 0.8.2 sets it in every pane; its own hooks call it), when
#                        it is an executable that is not a mam shim; else the first herdr on PATH
#                        that is not a mam shim
# Generated file: `mam shim install` overwrites it.

# the mam that installed this shim (else `mam` on PATH)
MAM_SHIM_MAM=(__MAM_CMD__)

shim_die() {
  local code=$1
  shift
  printf 'herdr shim: %s\n' "$*" >&2
  exit "$code"
}

shim_self=${BASH_SOURCE[0]}
shim_dir=${shim_self%/*}
[[ $shim_dir == "$shim_self" ]] && shim_dir=.

# --- the real herdr -------------------------------------------------------------------------
shim_is_shim() { # $1: a file; true when it is a mam herdr shim (marker on line 2)
  local l1 l2
  { IFS= read -r -n 256 l1 && IFS= read -r -n 256 l2; } <"$1" 2>/dev/null || return 1
  [[ $l2 == "# mam-herdr-shim:"* ]]
}

shim_real=
if [[ -n ${MAM_REAL_HERDR:-} ]]; then
  shim_real=$MAM_REAL_HERDR
  [[ -x $shim_real && ! -d $shim_real ]] || shim_die 127 "MAM_REAL_HERDR '$shim_real' is not an executable file"
  [[ $shim_real -ef $shim_self ]] && shim_die 127 "MAM_REAL_HERDR points at this shim ($shim_self); point it at the real herdr"
elif [[ -n ${HERDR_BIN_PATH:-} && -f $HERDR_BIN_PATH && -x $HERDR_BIN_PATH && ! $HERDR_BIN_PATH -ef $shim_self ]] && ! shim_is_shim "$HERDR_BIN_PATH"; then
  shim_real=$HERDR_BIN_PATH
else
  shim_old_ifs=$IFS
  IFS=:
  for shim_d in $PATH; do
    IFS=$shim_old_ifs
    [[ -z $shim_d ]] && shim_d=.
    shim_c=$shim_d/herdr
    [[ -f $shim_c && -x $shim_c ]] || continue
    [[ $shim_d -ef $shim_dir || $shim_c -ef $shim_self ]] && continue
    shim_is_shim "$shim_c" && continue
    shim_real=$shim_c
    break
  done
  IFS=$shim_old_ifs
  [[ -n $shim_real ]] || shim_die 127 "the real herdr is not on PATH (mam shims skipped); install herdr or set MAM_REAL_HERDR"
fi

# --- the target server ----------------------------------------------------------------------
shim_args=()
shim_session=
shim_l=
shim_words=()
shim_i=0
shim_n=$#
shim_argv=("$@")
while ((shim_i < shim_n)); do
  shim_a=${shim_argv[shim_i]}
  if [[ $shim_a == -- ]]; then
    shim_args+=("${shim_argv[@]:shim_i}")
    break
  fi
  case $shim_a in
    --session)
      ((shim_i + 1 < shim_n)) || shim_die 2 "--session needs a value"
      shim_session=${shim_argv[shim_i + 1]}
      shim_args+=("$shim_a" "$shim_session")
      shim_i=$((shim_i + 2))
      continue
      ;;
    --session=*)
      shim_session=${shim_a#--session=}
      shim_args+=("$shim_a")
      ;;
    -L)
      ((shim_i + 1 < shim_n)) || shim_die 2 "-L needs a value"
      shim_new=${shim_argv[shim_i + 1]}
      [[ -n $shim_l && $shim_l != "$shim_new" ]] && shim_die 2 "-L given twice with different servers ('$shim_l', '$shim_new')"
      shim_l=$shim_new
      shim_i=$((shim_i + 2))
      continue
      ;;
    *)
      shim_args+=("$shim_a")
      [[ $shim_a != -* && ${#shim_words[@]} -lt 2 ]] && shim_words+=("$shim_a")
      ;;
  esac
  shim_i=$((shim_i + 1))
done

if [[ -n $shim_l ]]; then
  if [[ -n $shim_session && $shim_session != "$shim_l" ]]; then
    shim_die 2 "-L '$shim_l' and --session '$shim_session' name different servers; give one of them"
  fi
  [[ -z $shim_session ]] && shim_args=(--session "$shim_l" "${shim_args[@]}")
  shim_session=$shim_l
elif [[ -z $shim_session && -n ${HERDR_SESSION_NAME:-} && ${HERDR_SESSION_NAME} != default ]]; then
  shim_session=$HERDR_SESSION_NAME
  shim_args=(--session "$shim_session" "${shim_args[@]}")
fi

# --- pane-claiming commands hold the pane-claim lock while the real herdr runs --------------
case "${shim_words[0]:-} ${shim_words[1]:-}" in
  "workspace create" | "tab create" | "pane split" | "agent start")
    if ! [[ -x ${MAM_SHIM_MAM[0]} ]]; then
      command -v mam >/dev/null 2>&1 || shim_die 127 "mam not found (neither ${MAM_SHIM_MAM[0]} nor mam on PATH)"
      MAM_SHIM_MAM=(mam)
    fi
    if [[ $shim_session == default ]]; then
      # an explicit --session default is herdr's default server (src/session.rs:459-465), not
      # the pane's own: its lock, whatever HERDR_SOCKET_PATH / HERDR_SESSION say
      shim_lock=$(env -u HERDR_SOCKET_PATH -u HERDR_SESSION "${MAM_SHIM_MAM[@]}" pane-lock path --session "") || exit $?
    else
      shim_lock=$("${MAM_SHIM_MAM[@]}" pane-lock path --session "$shim_session") || exit $?
    fi
    exec 9>>"$shim_lock" || shim_die 1 "cannot open the pane-claim lock $shim_lock"
    shim_got=$("${MAM_SHIM_MAM[@]}" pane-lock acquire --fd 9)
    shim_rc=$?
    if [[ $shim_got == timeout ]]; then
      shim_wait=$("${MAM_SHIM_MAM[@]}" pane-lock wait-seconds)
      shim_srv=${shim_lock##*/}
      shim_die 75 "gave up after ${shim_wait} s waiting for the pane-claim lock of server '${shim_srv%.lock}'; raise MAM_PANE_CLAIM_WAIT_S to wait longer"
    fi
    ((shim_rc == 0)) || exit "$shim_rc"
    ;;
esac

exec "$shim_real" "${shim_args[@]}"
