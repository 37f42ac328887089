#!/bin/sh
# mkxfs.sh -- an XFS file system in a loop-mounted image file, so that the
# XFS measurements (scripts/bench-wal-io.sh with DB_ROOT on it) can be
# repeated on a machine whose disk is formatted otherwise.
#
#   scripts/mkxfs.sh            # create (if needed) and mount; prints the mount point
#   scripts/mkxfs.sh --umount   # unmount, delete the image and the empty mount point
#
# Idempotent: a mount point that already holds this XFS is just printed, an
# image that is already XFS is mounted without a new mkfs.  Installs
# xfsprogs with apt-get when mkfs.xfs is missing.  Needs root and a kernel
# that lets this machine use loop devices (some containers do not: then it
# says so and exits 1).
#
# Environment:
#   IMG          the image file (default /var/tmp/ravel-xfs.img), sparse
#   SIZE         its size, as truncate(1) takes it (default 8G)
#   MNT          the mount point (default /mnt/ravel-xfs)
#   LOOP_DIO     1 (default): after mount -o loop, switch the loop device to
#                direct I/O on its backing file (losetup --direct-io=on), so
#                that XFS's writes reach the disk without going through a
#                second page cache (the one of the file system holding IMG):
#                closer to XFS on a real disk.  0: a plain buffered loop.
set -eu

IMG=${IMG:-/var/tmp/ravel-xfs.img}
SIZE=${SIZE:-8G}
MNT=${MNT:-/mnt/ravel-xfs}
LOOP_DIO=${LOOP_DIO:-1}

die() { echo "mkxfs: $*" >&2; exit 1; }

is_mounted() { mountpoint -q "$MNT" 2>/dev/null; }
mounted_fstype() { findmnt -n -o FSTYPE --mountpoint "$MNT" 2>/dev/null; }
# An XFS superblock starts with the magic "XFSB".
image_is_xfs() { [ -f "$IMG" ] && [ "$(head -c 4 "$IMG" 2>/dev/null)" = XFSB ]; }

umount_xfs() {
    if is_mounted; then
        umount "$MNT" || die "cannot unmount $MNT (busy? see: fuser -vm $MNT)"
    fi
    # mount -o loop sets autoclear, so the loop device went with the umount;
    # one left over from an interrupted run is detached here.
    if [ -f "$IMG" ] && command -v losetup >/dev/null 2>&1; then
        for dev in $(losetup -j "$IMG" -O NAME -n 2>/dev/null); do
            losetup -d "$dev" || true
        done
    fi
    rm -f -- "$IMG"
    rmdir -- "$MNT" 2>/dev/null || true
    echo "mkxfs: $MNT unmounted, $IMG removed"
}

install_xfsprogs() {
    command -v mkfs.xfs >/dev/null 2>&1 && return 0
    [ "$(id -u)" -eq 0 ] || die "mkfs.xfs is missing and installing xfsprogs needs root"
    echo "mkxfs: installing xfsprogs" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q xfsprogs >&2; then
        apt-get update -q >&2 || die "apt-get update failed"
        apt-get install -y -q xfsprogs >&2 || die "apt-get install xfsprogs failed"
    fi
    command -v mkfs.xfs >/dev/null 2>&1 || die "xfsprogs installed but no mkfs.xfs on PATH"
}

# The loop device's direct I/O as LOOP_DIO asks (also on a mount made before).
set_loop_dio() {
    dev=$(findmnt -n -o SOURCE --mountpoint "$MNT")
    case $dev in /dev/loop*) ;; *) return 0 ;; esac
    if [ "$LOOP_DIO" = 1 ]; then dio=on; else dio=off; fi
    losetup --direct-io="$dio" "$dev" ||
        echo "mkxfs: warning: losetup --direct-io=$dio $dev failed" >&2
}

mount_xfs() {
    if is_mounted; then
        fs=$(mounted_fstype)
        [ "$fs" = xfs ] || die "$MNT is already mounted, with $fs, not xfs"
        set_loop_dio
        echo "$MNT"
        return 0
    fi
    [ "$(id -u)" -eq 0 ] || die "mounting a loop image needs root"
    if [ ! -e /dev/loop-control ] || ! losetup -f >/dev/null 2>&1; then
        die "loop devices are not available here (no /dev/loop-control, or no
mkxfs: free loop device: losetup -f fails); mount -o loop cannot work on this
mkxfs: machine.  Run this where loop devices work, or point DB_ROOT at a
mkxfs: directory on a real XFS partition."
    fi
    grep -qw xfs /proc/filesystems 2>/dev/null ||
        modprobe xfs 2>/dev/null ||
        echo "mkxfs: warning: xfs is not in /proc/filesystems; the mount may fail" >&2
    if ! image_is_xfs; then
        install_xfsprogs
        mkdir -p -- "$(dirname -- "$IMG")"
        rm -f -- "$IMG"
        truncate -s "$SIZE" -- "$IMG" || die "cannot create the $SIZE image $IMG"
        mkfs.xfs -f -q "$IMG" >&2 || die "mkfs.xfs -f $IMG failed"
    fi
    mkdir -p -- "$MNT"
    if ! err=$(mount -o loop -t xfs -- "$IMG" "$MNT" 2>&1); then
        die "mount -o loop -t xfs $IMG $MNT failed:
$err
mkxfs: (a kernel without xfs, a container that may not mount, or a damaged
mkxfs: image: scripts/mkxfs.sh --umount deletes it and a rerun makes it anew)"
    fi
    set_loop_dio
    echo "$MNT"
}

case ${1:-} in
"") mount_xfs ;;
--umount) umount_xfs ;;
-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*) die "unknown argument '$1' (none to mount, --umount to undo)" ;;
esac
