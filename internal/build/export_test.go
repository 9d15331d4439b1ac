package build

// WalkModules makes a modules-only build run `make modules` (the walk of
// every folder) instead of module goals.
func WalkModules(o *Options) { o.walkModules = true }
