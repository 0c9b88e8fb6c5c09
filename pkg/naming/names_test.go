package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestStatefulSetName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 60)
	for _, tc := range []struct {
		name               string
		sdc, dc, rack      string
		want               string
		wantHashedAndValid bool
	}{
		{name: "short names are joined as they are", sdc: "basic", dc: "us-east-1", rack: "a", want: "basic-us-east-1-a"},
		{name: "long names are truncated with a hash", sdc: long, dc: "dc", rack: "rack", wantHashedAndValid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := StatefulSetName(tc.sdc, tc.dc, tc.rack)
			if !tc.wantHashedAndValid {
				if got != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				return
			}
			if len(got) > statefulSetNameMaxLength {
				t.Errorf("%q is %d characters, longer than %d", got, len(got), statefulSetNameMaxLength)
			}
			pod := PodName(got, 99999)
			if errs := validation.IsDNS1123Label(pod); len(errs) != 0 {
				t.Errorf("pod name %q is invalid: %v", pod, errs)
			}
			if other := StatefulSetName(tc.sdc, tc.dc, tc.rack+"x"); other == got {
				t.Errorf("two racks sharing a long prefix got the same name %q", got)
			}
		})
	}
}

func TestPodOrdinal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pod     string
		want    int32
		wantErr bool
	}{
		{pod: "basic-dc-a-0", want: 0},
		{pod: "basic-dc-a-12", want: 12},
		{pod: "nodash", wantErr: true},
		{pod: "basic-dc-a-x", wantErr: true},
		{pod: "basic-dc-a-", wantErr: true},
	} {
		got, err := PodOrdinal(tc.pod)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("PodOrdinal(%q) = %d, %v; want %d, error %v", tc.pod, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestScyllaDBManagerTaskName(t *testing.T) {
	t.Parallel()
	got := ScyllaDBManagerTaskName("Basic", "Backup", "Daily")
	if !strings.HasPrefix(got, "basic-backup-daily-") || len(got) != len("basic-backup-daily-")+5 {
		t.Errorf("got %q, want lowercase basic-backup-daily-<hash5>", got)
	}
	if got == ScyllaDBManagerTaskName("Basic", "Repair", "Daily") {
		t.Error("a backup and a repair of the same name got the same object name")
	}
	if ScyllaDBManagerTaskName("a-b", "Backup", "c") == ScyllaDBManagerTaskName("a", "Backup", "b-c") {
		t.Error("different cluster/task splits of the same text got the same object name")
	}
	long := ScyllaDBManagerTaskName(strings.Repeat("x", 250), "Repair", "weekly")
	if errs := validation.IsDNS1123Subdomain(long); len(errs) != 0 {
		t.Errorf("long name %q is invalid: %v", long, errs)
	}
}

func TestBoundedNamesAreValid(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("b", 70)
	if errs := validation.IsDNS1035Label(ClientServiceName(long)); len(errs) != 0 {
		t.Errorf("client Service name %q is invalid: %v", ClientServiceName(long), errs)
	}
	for _, n := range []string{AgentAuthTokenSecretName(long), MemberServiceAccountName(long), ManagedConfigName(long)} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) != 0 {
			t.Errorf("name %q is invalid: %v", n, errs)
		}
	}
}

func TestHash5(t *testing.T) {
	t.Parallel()
	if got := Hash5("a"); len(got) != 5 {
		t.Errorf("Hash5 = %q, want 5 characters", got)
	}
	if Hash5("ab", "c") == Hash5("a", "bc") {
		t.Error("part boundaries do not change the hash")
	}
}
