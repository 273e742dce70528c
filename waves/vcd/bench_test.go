package vcd_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/nisim/nisim/waves/vcd"
)

// benchDump returns a dump of about size bytes in nisim's style: 64
// variables of every kind, a few changes per timestamp.
func benchDump(size int) []byte {
	var b bytes.Buffer
	b.WriteString("$version\n\tnisim waves 1\n$end\n$timescale 1ps $end\n$scope module Demo $end\n")
	const n = 64
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "$scope module Unit[%d] $end\n", i)
		fmt.Fprintf(&b, "$var wire 1 %c req $end\n", '!'+4*i%94)
		fmt.Fprintf(&b, "$var wire 32 %c%c addr [31:0] $end\n", '!'+i%94, '!'+1)
		fmt.Fprintf(&b, "$var real 64 %c%c lat $end\n", '!'+i%94, '!'+2)
		fmt.Fprintf(&b, "$var string 1 %c%c state $end\n", '!'+i%94, '!'+3)
		b.WriteString("$upscope $end\n")
	}
	b.WriteString("$upscope $end\n$enddefinitions $end\n")
	for t := 0; b.Len() < size; t++ {
		fmt.Fprintf(&b, "#%d\n", t*1000)
		for j := 0; j < 8; j++ {
			i := (t*8 + j) % n
			switch j % 4 {
			case 0:
				fmt.Fprintf(&b, "%d%c\n", t&1, '!'+4*i%94)
			case 1:
				fmt.Fprintf(&b, "b%b %c%c\n", t*j, '!'+i%94, '!'+1)
			case 2:
				fmt.Fprintf(&b, "r%d.25 %c%c\n", t, '!'+i%94, '!'+2)
			case 3:
				fmt.Fprintf(&b, "sS%d %c%c\n", t%7, '!'+i%94, '!'+3)
			}
		}
	}
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	data := benchDump(50 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, err := vcd.Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
