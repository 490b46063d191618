package engine

// UringName is the io_uring backend's name in the registry.
const UringName = "uring"

func init() {
	Register(BackendInfo{Name: UringName, Preference: 0, Caps: NeedsHonestShortIO,
		New: NewUring, Available: UringAvailable})
}
