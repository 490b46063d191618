// Package untar extracts a tar stream into a directory without letting
// the archive reach outside it: KubeVirt CDI's archive content type,
// whose importer untars an archive from a URL into the filesystem volume
// at /data (CDI runs GNU tar --preserve-permissions --no-same-owner).
//
// # Contract
//
// Extract reads the archive once, in order, with archive/tar, and makes
// each member beneath dir:
//
//   - Names: a leading "/" is dropped, as GNU tar drops it; a name with a
//     ".." element fails the extraction (GNU tar skips it and fails at
//     the end). "." and "" (the directory itself) are left alone.
//   - Every directory on a member's way is opened one element at a time
//     with O_NOFOLLOW from dir's own descriptor: a symbolic link on the
//     way (one the archive made, or one already there) fails the
//     extraction instead of being followed. Missing directories are made.
//   - What already stands where a member goes (a file, a link) is
//     removed first, never written through; a directory stays.
//   - Symbolic links are made as they are when their target stays
//     beneath dir read from where the link is; an absolute target, or one
//     that climbs out, fails the extraction. Hard links must name a
//     member beneath dir (the same rules as names), resolved the same
//     way.
//   - Regular files and directories get the archive's permission bits
//     (mode & 0777: no set-user-ID, set-group-ID or sticky bit) and its
//     modification time; directories once everything is extracted, so
//     that a read-only directory still receives its members. Owners are
//     not kept: everything belongs to the extracting user.
//   - FIFOs are made; character and block devices fail the extraction
//     (CDI's importer runs without the capability to make them).
//   - A member whose data ends before its declared size, a damaged
//     header, or a stream that fails, fails the extraction.
//
// What was extracted before a failure stays; CDI's importer leaves it
// too, and its next run extracts over it.
package untar
