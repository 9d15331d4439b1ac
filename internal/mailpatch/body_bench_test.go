package mailpatch

import (
	"strings"
	"testing"
)

// BenchmarkBodyLongLines reads bodies whose pending text grows long (a
// base64 line of 8 MiB, a million flowed soft breaks in base64 and QP):
// linear in the input, not in its square.
func BenchmarkBodyLongLines(b *testing.B) {
	bodies := map[string]string{
		"base64-long-line": "Content-Transfer-Encoding: base64\n\n" + b64Lines(strings.Repeat("x", 8<<20)+"\n---\n"+classDiffText(false)),
		"flowed-base64":    "Content-Type: text/plain; format=flowed\nContent-Transfer-Encoding: base64\n\n" + b64Lines(strings.Repeat("word \n", 1<<20)+"end\n"),
		"flowed-qp-delsp":  "Content-Type: text/plain; format=flowed; delsp=yes\nContent-Transfer-Encoding: quoted-printable\n\n" + strings.Repeat("word=20\n", 1<<20) + "end\n",
	}
	for name, body := range bodies {
		mail := []byte("From: J <j@x.org>\nSubject: [PATCH] s\n" + body)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ImportBytes("bench.eml", mail, "s", Options{})
			}
		})
	}
}
