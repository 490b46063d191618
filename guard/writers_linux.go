package guard

// FindWriters lists what writes the bytes src reads while a copy reads
// them: a file system mounted read-write on src (a block device), on the
// disk below it or on one of its partitions, active swap, and the same
// through every loop device that shows src's bytes (a VM image file
// loop-mounted read-write). A live file system copies inconsistently: its
// metadata and data change between the first read and the last. A file
// system mounted read-only is no writer. Each entry reads like
// "/dev/vdx1 is mounted on /data (ext4)". The error is only for a mount
// table that cannot be read.
func FindWriters(src Span) ([]string, error) {
	table, err := readMountTable()
	if err != nil {
		return nil, err
	}
	table = table.writing()
	srcs := stack(src)
	var found []Busy
	for _, s := range srcs {
		if s.Obj.Block {
			found = append(found, blockBusy(table, s, "")...)
		} else if m := table.of(s.Obj); m != "" {
			found = append(found, Busy{What: s.Label + " is " + m, Kind: Mounted})
		}
	}
	skip := map[Object]bool{}
	for _, s := range srcs {
		skip[s.Obj] = true
	}
	found = append(found, loopUsers(table, "SRC", srcs, skip, maxStack)...)
	var out []string
	for _, b := range found {
		if b.Kind == Mounted { // holders (dm, md) are users, not proof of writes
			out = append(out, b.What)
		}
	}
	return out, nil
}
