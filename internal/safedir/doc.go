// Package safedir makes, replaces, reads and removes the files ringcp
// keeps beside a DST (a new DST's hidden temporary or partial file, a
// resume state and its temporary) and in its control folder, so that
// another local user who can write to the folder cannot turn them into a
// write to some other file.
//
// # Contract
//
// A Dir is a folder opened once; every operation on its files goes
// through that descriptor (openat, renameat2, linkat, unlinkat), so the
// folder cannot be swapped under a copy by renaming a path component.
// Create never follows a symlink and never opens a file that exists
// (O_CREAT|O_EXCL|O_NOFOLLOW): a symlink or a hard link planted under the
// name fails with EEXIST. OpenFile and Lstat never follow a symlink in the
// last component. ReadOwn reads only a regular file that this process's
// user owns and that nobody else may write: a file another user planted
// is an *OwnerError. Replace writes a whole file under a temporary name
// made with Create, syncs it and renames it over the name.
//
// OpenPrivate opens a folder that must be this user's alone (the control
// folder of `ringcp rate`): made 0700 when missing, and refused (an
// *OwnerError) when it is a symlink, belongs to another user, or others
// may write to it.
//
// Linux only; the package is empty elsewhere.
package safedir
