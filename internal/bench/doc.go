// Package bench is patchctl bench: an A/B benchmark of the baseline and
// patched kernels patchctl build made, over the boot harness
// (internal/boot). Boots alternate A B A B; in each the guest agent warms
// up and measures itself (qemu/agent, no fio): 4 KiB random O_DIRECT reads
// at queue depth 1 timed per I/O, and seed 003's in-capsule sweep (random
// writes and a 70/30 read/write mix, 512 B to 32 KiB, with the nvmet
// port's param_inline_data_size at 4096 and 16384). Boots are the
// independent samples: each variant's figure is the mean over its boots
// with a 95 % interval, the difference is Welch's, and its interval makes
// the verdict (faster, slower, no difference). A self-check looks for a
// known effect (8 KiB writes need an RDMA READ with 4 KiB in-capsule data
// and not with 16 KiB) to show the harness can see one at all.
package bench
