//go:build unix

package registry

import "golang.org/x/sys/unix"

// statFile returns the fileID of the regular file that path names,
// symlinks followed; false when there is none to give (the read that
// follows says why).
func statFile(path string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
