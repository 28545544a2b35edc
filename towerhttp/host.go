package towerhttp

import "strings"

// hostKey is the key of a host's stack in a Transport.
type hostKey struct{ scheme, host string }

// canonicalHost returns host, a URL's host with or without a port, with
// ASCII letters in lower case, no trailing dot after a name, and no port if
// it is empty or the scheme's default. An IPv6 literal keeps its brackets,
// and its zone (after "%25") its case, as interface names have one.
func canonicalHost(scheme, host string) string {
	if plain(host) {
		return host
	}
	name, port := host, ""
	if i := portColon(host); i >= 0 {
		name, port = host[:i], host[i+1:]
	}
	if port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		port = "" // the default
	}
	if !strings.HasPrefix(name, "[") {
		name = strings.TrimSuffix(name, ".")
	}
	name = lowerASCII(name)
	if port == "" {
		return name
	}
	if len(name)+1+len(port) == len(host) && host[:len(name)] == name {
		return host // nothing changed
	}
	return name + ":" + port
}

// plain reports whether host is canonical at a glance, as most hosts are.
func plain(host string) bool {
	for i := range len(host) {
		if c := host[i]; c == ':' || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return !strings.HasSuffix(host, ".")
}

// portColon returns the index of the colon before host's port, or -1 if it
// has none: the last colon, if only digits follow it and it is not inside
// an IPv6 literal's brackets.
func portColon(host string) int {
	i := strings.LastIndexByte(host, ':')
	if i < 0 {
		return -1
	}
	for _, c := range []byte(host[i+1:]) {
		if c < '0' || c > '9' {
			return -1
		}
	}
	return i
}

// lowerASCII returns name with its ASCII letters in lower case, up to the
// zone of an IPv6 literal.
func lowerASCII(name string) string {
	end := len(name)
	if strings.HasPrefix(name, "[") {
		before, _, _ := strings.Cut(name, "%") // all of name if it has no zone
		end = len(before)
	}
	for i := range end {
		if c := name[i]; 'A' <= c && c <= 'Z' {
			b := []byte(name)
			for j := i; j < end; j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return name
}
