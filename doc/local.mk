# SPDX-License-Identifier: GPL-2.0-or-later
# doc/: the manual pages.  fwdctl(8) is made from fwdctl's own help texts,
# fwdalloc.yaml(5) from the policy loader's schema (`fwdctl policy keys`)
# and the commented example policy, fwdalloc-topology(5) from the example
# topology's key documentation: one source each, never a second copy.
nodist_man_MANS = doc/fwdctl.8 doc/fwdalloc.yaml.5 doc/fwdalloc-topology.5 \
	doc/spank-fwdalloc.8 doc/fwdallocd.8
CLEANFILES += $(nodist_man_MANS)
EXTRA_DIST += doc/gen-fwdctl-man doc/gen-policy-man doc/gen-topology-man \
	doc/gen-fwdallocd-man \
	doc/spank-fwdalloc.8.in

doc/fwdctl.8: fwdctl$(EXEEXT) $(srcdir)/doc/gen-fwdctl-man
	$(AM_V_GEN)$(MKDIR_P) doc && \
	FWDALLOC_POLICY=/nonexistent/fwdalloc.yaml \
	$(SHELL) $(srcdir)/doc/gen-fwdctl-man ./fwdctl$(EXEEXT) \
		'$(PACKAGE_VERSION)' >$@.tmp && mv $@.tmp $@
doc/fwdallocd.8: fwdallocd$(EXEEXT) $(srcdir)/doc/gen-fwdallocd-man
	$(AM_V_GEN)$(MKDIR_P) doc && \
	$(SHELL) $(srcdir)/doc/gen-fwdallocd-man ./fwdallocd$(EXEEXT) \
		'$(PACKAGE_VERSION)' >$@.tmp && mv $@.tmp $@
doc/fwdalloc.yaml.5: fwdctl$(EXEEXT) $(srcdir)/doc/gen-policy-man \
		etc/fwdalloc.yaml.dist
	$(AM_V_GEN)$(MKDIR_P) doc && \
	$(SHELL) $(srcdir)/doc/gen-policy-man ./fwdctl$(EXEEXT) \
		'$(PACKAGE_VERSION)' etc/fwdalloc.yaml.dist >$@.tmp && \
	mv $@.tmp $@
doc/fwdalloc-topology.5: $(srcdir)/etc/topology.yaml \
		$(srcdir)/doc/gen-topology-man
	$(AM_V_GEN)$(MKDIR_P) doc && \
	$(SHELL) $(srcdir)/doc/gen-topology-man '$(PACKAGE_VERSION)' \
		$(srcdir)/etc/topology.yaml >$@.tmp && mv $@.tmp $@
doc/spank-fwdalloc.8: $(srcdir)/doc/spank-fwdalloc.8.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc && $(FWD_SUBST) \
		-e 's|@VERSION[@]|$(PACKAGE_VERSION)|g' \
		-e 's|@SLURM_RELEASE[@]|$(SLURM_RELEASE)|g' \
		$(srcdir)/doc/spank-fwdalloc.8.in >$@.tmp && mv $@.tmp $@
