#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The BPF LSM programs for real, on a kernel that accepts them: boots Debian's 6.1 kernel in QEMU
# (TCG: /dev/kvm on these machines hangs stock kernels) with an initramfs of static busybox, the
# static loader (which embeds the BPF objects) and the static test program, and runs vm/init.
# Prints the guest's checks and exits 0 when it says VM TEST PASS. Needs no root.
#
#   (a) kernel   apt-get download the linux-image-6.1.0-*-amd64 that linux-image-amd64 depends
#                on, into vm/.cache/ (kept), and take its boot/vmlinuz-*
#   (b) build    make static: the loader and vm/vmtest.c, linked statically
#   (c) pack     initramfs: busybox and its applet links, /init, the loader, the test program
#   (d) boot     qemu-system-x86_64, within $VM_TEST_TIMEOUT seconds (300); the serial console goes
#                to vm/.cache/serial.log; a guest that stalls before a verdict is booted once more
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bpf=$(dirname "$here")
cache=$here/.cache
timeout_s=${VM_TEST_TIMEOUT:-300}

die() {
	echo "vm-test: $*" >&2
	exit 1
}
need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 not found; $2"
}
need qemu-system-x86_64 "install qemu-system-x86"
need cpio "install cpio"
need busybox "install busybox-static"
need apt-get "a Debian system is needed to fetch the guest kernel"
need dpkg-deb "a Debian system is needed to unpack the guest kernel"
busybox=$(command -v busybox)
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamically linked; install busybox-static"

start=$(date +%s)
mkdir -p "$cache"

# (a) The guest kernel.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-6\.1\.[^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || die "apt-cache names no linux-image-6.1.*-amd64 for linux-image-amd64 (run apt-get update)"
vmlinuz=$cache/vmlinuz-${pkg#linux-image-}
if [ ! -s "$vmlinuz" ]; then
	deb=$(ls "$cache/${pkg}"_*.deb 2>/dev/null | head -n 1 || true)
	if [ -z "$deb" ]; then
		(cd "$cache" && apt-get download "$pkg") || die "apt-get download $pkg failed"
		deb=$(ls "$cache/${pkg}"_*.deb | head -n 1)
	fi
	unpacked=$(mktemp -d "$cache/unpack.XXXXXX")
	dpkg-deb -x "$deb" "$unpacked"
	cp "$unpacked"/boot/vmlinuz-* "$vmlinuz"
	rm -rf "$unpacked"
fi

# (b) Static binaries.
make -s -C "$bpf" static

# (c) The initramfs.
root=$cache/initramfs
rm -rf "$root"
mkdir -p "$root/bin" "$root/test" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/srv" "$root/opt" "$root/etc"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$bpf/.output/static/mcpguard-loader" "$root/bin/"
cp "$bpf/.output/static/vmtest" "$root/test/"
cp "$here/init" "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$cache/initramfs.gz"

# (d) Boot. A guest under TCG that stalls in its own kernel, a soft lockup or an RCU stall on its
# console before any verdict (seen once in CI on a loaded host: both vCPUs stuck for minutes), has
# said nothing about the programs: it is stopped at once and booted once more, saying so, within
# the same time limit. A verdict, PASS or FAIL, is never retried. $VM_QEMU names another emulator
# and $VM_SERIAL_LOG another log (the tests give a stand-in that stalls). The emulator runs under
# timeout(1) too, and is stopped if this script is.
log=${VM_SERIAL_LOG:-$cache/serial.log}
qemu=${VM_QEMU:-qemu-system-x86_64}
pid=
stop() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
verdict() {
	tr -d '\r' <"$log" | grep -q -E '^(VM TEST |vmtest: FAIL)'
}
stalled() {
	grep -q -E 'soft lockup|rcu_[a-z_]* detected (expedited )?stalls|self-detected stall' "$log" && ! verdict
}
# Boots the guest until the emulator ends (0: powered off, or stopped by timeout(1) at the limit),
# the guest stalls (2), or no time is left to boot it (1).
boot() {
	left=$((booted + timeout_s - $(date +%s)))
	[ "$left" -gt 0 ] || return 1
	# Emptied here, not by the emulator's redirection: the checks below must never read the last boot's log.
	: >"$log"
	timeout "$left" "$qemu" -accel tcg,thread=multi -cpu max -m 1G -smp 2 -nographic -no-reboot \
		-nic none -kernel "$vmlinuz" -initrd "$cache/initramfs.gz" \
		-append "console=ttyS0 lsm=lockdown,capability,landlock,bpf panic=-1 quiet" </dev/null >>"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if stalled; then
			stop
			wait "$pid" 2>/dev/null || true
			pid=
			# A verdict that came in meanwhile stands.
			verdict && return 0
			return 2
		fi
		sleep 0.5
	done
	wait "$pid" 2>/dev/null || true
	pid=
	return 0
}
booted=$(date +%s)
status=0
boot || status=$?
if [ "$status" -eq 2 ]; then
	cp "$log" "${log%.log}-stalled.log"
	echo "vm-test: the guest stalled in its own kernel before a verdict (a soft lockup or an RCU stall: ${log%.log}-stalled.log); booting it once more" >&2
	status=0
	boot || status=$?
	[ "$status" -ne 2 ] || echo "vm-test: it stalled again" >&2
fi
tr -d '\r' <"$log" | grep -E '^(vm: |vmtest: |VM TEST|mcpguard-loader: )' || true
elapsed=$(($(date +%s) - start))
if tr -d '\r' <"$log" | grep -q '^VM TEST PASS$'; then
	echo "vm-test: PASS in ${elapsed}s"
	exit 0
fi
echo "vm-test: no PASS from the guest after ${elapsed}s; the serial log's end ($log):" >&2
tr -d '\r' <"$log" | tail -n 40 >&2
exit 1
