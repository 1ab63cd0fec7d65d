#!/bin/bash
# One fake Juju hook tool, as thin as Juju's jujuc: it sends its name, its arguments and (only when the tool reads it,
# `--file -`) its stdin to the fake unit agent of the dispatch (tool-server.ts) over bash's /dev/tcp, prints the answer
# and exits with its code. Arguments go length-prefixed in bytes (LC_ALL=C), so any byte an argument can hold passes
# unquoted and unchanged; stdin goes as base64. Needs only bash and coreutils.
export LC_ALL=C
started=${EPOCHREALTIME/./}
if [[ -z ${FAKE_JUJU_TOOLS:-} ]] || ! { exec 3<>"/dev/tcp/127.0.0.1/$FAKE_JUJU_TOOLS"; } 2>/dev/null; then
  echo "ERROR cannot reach the fake unit agent (FAKE_JUJU_TOOLS=${FAKE_JUJU_TOOLS:-unset})" >&2
  exit 1
fi
tool=${0##*/}
stdin=0
previous=
for arg; do
  case $arg in
    --file=- | -file=-) stdin=1 ;;
    -) [[ $previous == --file || $previous == -file ]] && stdin=1 ;;
  esac
  previous=$arg
done
request="$started $stdin $(($# + 1))"$'\n'"${#tool}:$tool"
for arg; do request+="${#arg}:$arg"; done
printf '%s' "$request" >&3
if ((stdin)); then
  base64 -w0 >&3
  printf '\n' >&3
fi
# The answer: "<exit code> <stdout bytes> <stderr bytes>\n", the stderr bytes, then the stdout bytes.
if ! IFS=' ' read -r code outlen errlen <&3; then
  echo "ERROR the fake unit agent did not answer" >&2
  exit 1
fi
if ((errlen > 0)); then
  IFS= read -r -N "$errlen" err <&3
  printf '%s' "$err" >&2
fi
if ((outlen > 4096)); then
  cat <&3 # bash reads a socket one byte per call: a large answer is cheaper through cat
elif ((outlen > 0)); then
  IFS= read -r -N "$outlen" out <&3
  printf '%s' "$out"
fi
exit "$code"
