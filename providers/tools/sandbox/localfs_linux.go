package sandbox

import "golang.org/x/sys/unix"

// localFS tells whether the filesystem holding p sets a directory's times
// on every change and reports them fresh, so a walk may trust them (see
// envFiles). A network filesystem does not: NFS, SMB, 9p (WSL's /mnt/c)
// and FUSE clients serve cached attributes, and changes made from the
// other side may come with the server's clock; their directories are
// listed on every walk.
func localFS(p string) bool {
	var st unix.Statfs_t
	if unix.Statfs(p, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.RAMFS_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC,
		unix.SQUASHFS_MAGIC, zfsSuperMagic:
		return true
	}
	return false
}

const zfsSuperMagic = 0x2fc12fc1
