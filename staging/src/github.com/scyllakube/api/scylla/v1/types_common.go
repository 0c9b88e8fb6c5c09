package v1

// ObjectTemplateMetadata holds the labels and annotations that the operator merges onto objects it creates.
type ObjectTemplateMetadata struct {
	// labels are merged onto the labels of the created object; the operator's own labels win on conflict.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are merged onto the annotations of the created object; the operator's own annotations win
	// on conflict.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// TLSCertificateType says who provides a serving certificate.
// +enum
type TLSCertificateType string

const (
	// OperatorManagedTLSCertificateType means the operator creates and rotates the certificate.
	OperatorManagedTLSCertificateType TLSCertificateType = "OperatorManaged"

	// UserManagedTLSCertificateType means the user provides the certificate in a kubernetes.io/tls Secret.
	UserManagedTLSCertificateType TLSCertificateType = "UserManaged"
)

// UserManagedTLSCertificateOptions points at a certificate the user provides.
type UserManagedTLSCertificateOptions struct {
	// secretName is the name of a Secret of type kubernetes.io/tls, in the ScyllaCluster's namespace, that holds
	// the certificate and its key.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="secretName must be a valid Secret name (a lowercase RFC 1123 subdomain)"
	SecretName string `json:"secretName"`
}

// OperatorManagedTLSCertificateOptions tunes a certificate the operator creates.
type OperatorManagedTLSCertificateOptions struct {
	// additionalDNSNames are extra DNS names added to the certificate's subject alternative names.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="each additional DNS name must be a lowercase RFC 1123 subdomain, e.g. scylla.example.com"
	AdditionalDNSNames []string `json:"additionalDNSNames,omitempty"`

	// additionalIPAddresses are extra IP addresses added to the certificate's subject alternative names.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="each additional IP address must be a valid IPv4 or IPv6 address"
	AdditionalIPAddresses []string `json:"additionalIPAddresses,omitempty"`
}

// TLSCertificate configures a serving certificate.
// +kubebuilder:validation:XValidation:rule="self.type != 'UserManaged' || has(self.userManagedOptions)",fieldPath=".userManagedOptions",reason="FieldValueRequired",message="userManagedOptions is required when type is UserManaged"
type TLSCertificate struct {
	// type says who provides the certificate: OperatorManaged or UserManaged.
	// +required
	// +kubebuilder:validation:Enum=OperatorManaged;UserManaged
	Type TLSCertificateType `json:"type"`

	// userManagedOptions points at the certificate when type is UserManaged.
	// +optional
	UserManagedOptions *UserManagedTLSCertificateOptions `json:"userManagedOptions,omitempty"`

	// operatorManagedOptions tunes the certificate when type is OperatorManaged.
	// +optional
	OperatorManagedOptions *OperatorManagedTLSCertificateOptions `json:"operatorManagedOptions,omitempty"`
}
