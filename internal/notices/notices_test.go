package notices_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/notices"
)

// TestCheckedInIsCurrent: THIRD_PARTY_NOTICES is what make notices writes
// for today's go.mod and toolchain, so a dependency bump that forgets it
// fails here (and in CI) instead of shipping stale notices.
func TestCheckedInIsCurrent(t *testing.T) {
	have, err := os.ReadFile("../../" + notices.FileName)
	if err != nil {
		t.Fatalf("%v (run make notices)", err)
	}
	stdlib, mods, err := notices.Collect(t.Context(), notices.Source{
		ModuleDir: "../..", Package: imagebuild.Package, Platforms: []string{"linux/amd64", "linux/arm64"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := notices.Render(stdlib, mods); !bytes.Equal(have, want) {
		t.Fatalf("%s is not current: run make notices and commit it", notices.FileName)
	}
	ids, err := notices.Parse(have)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(mods)+1 || ids["stdlib"] != "BSD-3-Clause" {
		t.Errorf("parsed %d sections (stdlib %q), rendered %d modules and stdlib", len(ids), ids["stdlib"], len(mods))
	}
	// The Apache-2.0 modules the issue named ship NOTICE files: each must
	// be carried.
	for _, want := range []string{"github.com/aws/aws-sdk-go-v2 ", "github.com/aws/smithy-go ", "github.com/prometheus/common ", "go.yaml.in/yaml/v2 "} {
		i := slices.IndexFunc(mods, func(m notices.Module) bool { return strings.HasPrefix(m.Path+" ", want) })
		if i < 0 || !slices.ContainsFunc(mods[i].Files, func(f notices.File) bool { return strings.HasPrefix(f.Name, "NOTICE") }) {
			t.Errorf("%sis not listed with its NOTICE file", want)
		}
	}
}

func TestIdentify(t *testing.T) {
	for text, want := range map[string]string{
		"Apache License\n Version 2.0, January 2004":                                                 "Apache-2.0",
		"Permission is hereby granted, free of charge, to any person":                                "MIT",
		"Redistribution and use in source and binary forms ... Neither the name of Google":           "BSD-3-Clause",
		"Redistribution and use in source and binary forms, with or without modification":            "BSD-2-Clause",
		"Permission to use, copy, modify, and/or distribute this software for any purpose":           "ISC",
		"Apache License Version 2.0 ... Permission is hereby granted, free of charge, to any person": "Apache-2.0 MIT",
		"All rights reserved.": "",
	} {
		if got := strings.Join(notices.Identify(text), " "); got != want {
			t.Errorf("notices.Identify(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestParseIgnoresLicenseLinesInTexts: a licence text's own "License:"
// line (parquet-go's has one) is not a section.
func TestParseIgnoresLicenseLinesInTexts(t *testing.T) {
	data := notices.Render(notices.Module{Path: "stdlib", Version: "go1.0", License: "BSD-3-Clause", Files: []notices.File{{"LICENSE", "x"}}},
		[]notices.Module{{Path: "example.com/m", Version: "v1.0.0", License: "Apache-2.0", Files: []notices.File{{"LICENSE", "License: http://www.apache.org/licenses/LICENSE-2.0\n"}}}})
	got, err := notices.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["stdlib"] != "BSD-3-Clause" || got["example.com/m v1.0.0"] != "Apache-2.0" {
		t.Errorf("parsed %v", got)
	}
}
